#include "base/field.hpp"

#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace attnbench {

std::string format_number(double value) {
  char buf[64];
  const auto [end, ec] =
      std::to_chars(buf, buf + sizeof buf, value);  // shortest that reads back exactly
  if (ec != std::errc()) throw std::logic_error("cannot format a number for the CSV");
  return std::string(buf, end);
}

std::string field_text(const FieldValue& value) {
  struct {
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return format_number(d); }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(const std::vector<std::string>& names) const {
      std::string out;
      for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
      return out;
    }
  } visit;
  return std::visit(visit, value);
}

FieldValue parse_field_text(FieldType type, const std::string& text) {
  if (text.empty() && type != FieldType::text && type != FieldType::list) return {};
  switch (type) {
    case FieldType::text:
    case FieldType::choice: return text;
    case FieldType::boolean:
      if (text == "true") return true;
      if (text == "false") return false;
      throw std::invalid_argument("'" + text + "' is not true or false");
    case FieldType::integer: {
      size_t used = 0;
      int64_t value = 0;
      try {
        value = std::stoll(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != text.size() || used == 0)
        throw std::invalid_argument("'" + text + "' is not an integer");
      return value;
    }
    case FieldType::number: {
      size_t used = 0;
      double value = 0;
      try {
        value = std::stod(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != text.size() || used == 0 || !std::isfinite(value))
        throw std::invalid_argument("'" + text + "' is not a finite number");
      return value;
    }
    case FieldType::list: {
      std::vector<std::string> names;
      std::istringstream in(text);
      for (std::string n; in >> n;) names.push_back(n);
      return names;
    }
  }
  return {};
}

}  // namespace attnbench
