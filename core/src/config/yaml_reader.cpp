#include "config/yaml_reader.hpp"

#include "base/names.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

namespace attnbench {

namespace {

std::string kind(const YAML::Node& node) {
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a list";
  if (node.IsNull()) return "nothing";
  return "'" + node.Scalar() + "'";
}

std::string trim_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string closest(const std::string& key, const std::vector<std::string>& allowed) {
  std::string best;
  size_t best_distance = 3;  // suggest only near misses
  for (const auto& a : allowed) {
    if (a.rfind(key, 0) == 0) return a;  // "warmup" for "warmup_ms"
    const size_t d = edit_distance(key, a);
    if (d < best_distance) best_distance = d, best = a;
  }
  return best;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

void YamlReader::fail(const YAML::Node& node, const std::string& key,
                      const std::string& msg) const {
  fail_at(node.Mark(), key, msg);
}

void YamlReader::fail_at(const YAML::Mark& mark, const std::string& key,
                         const std::string& msg) const {
  // yaml-cpp marks are 0-based; a node built without a source has -1.
  throw ConfigError(file_, mark.line < 0 ? 1 : mark.line + 1, mark.column < 0 ? 1 : mark.column + 1,
                    key, msg);
}

void YamlReader::check_keys(const YAML::Node& map, const std::string& where,
                            const std::vector<std::string>& allowed) const {
  if (!map.IsMap()) fail(map, where, "expected a mapping of keys to values");
  std::map<std::string, int>
      seen;  // key -> line, for repeats: yaml-cpp keeps both and reads the first
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    if (auto [it, fresh] = seen.emplace(key, kv.first.Mark().line + 1); !fresh)
      fail_at(kv.first.Mark(), qualified(where, key),
              "appears twice in this mapping (first on line " + std::to_string(it->second) + ")");
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string msg = "unknown key";
      const std::string guess = closest(key, allowed);
      if (!guess.empty()) msg += " (did you mean '" + guess + "'?)";
      msg += "; allowed here: " + join(allowed);
      fail_at(kv.first.Mark(), qualified(where, key), msg);
    }
    if (kv.second.IsNull()) fail_at(kv.first.Mark(), qualified(where, key), "has no value");
  }
}

std::string YamlReader::scalar(const YAML::Node& node, const std::string& key) const {
  if (!node.IsScalar()) fail(node, key, "expected a single value, got " + kind(node));
  return node.Scalar();
}

int64_t YamlReader::integer(const YAML::Node& node, const std::string& key,
                            int64_t min_value) const {
  const std::string text = scalar(node, key);
  int64_t value = 0;
  try {
    size_t used = 0;
    value = std::stoll(text, &used, 10);
    if (used != text.size()) throw std::invalid_argument(text);
  } catch (const std::out_of_range&) {  // a whole number past int64: name the bound it broke
    fail(node, key,
         "expected an integer from " + std::to_string(min_value) + " to " +
             std::to_string(std::numeric_limits<int64_t>::max()) + ", got " + text);
  } catch (const std::exception&) {
    fail(node, key, "expected an integer, got '" + text + "'");
  }
  if (value < min_value)
    fail(node, key, "must be at least " + std::to_string(min_value) + ", got " + text);
  return value;
}

double YamlReader::number(const YAML::Node& node, const std::string& key, double min_value,
                          bool exclusive_min) const {
  const std::string text = scalar(node, key);
  double value = 0;
  try {
    size_t used = 0;
    value = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
  } catch (const std::out_of_range&) {
    // A number, but past a double's range (1e400) or below its smallest (1e-400).
    fail(node, key, "'" + text + "' is outside the range of a double (about 1e-308 to 1e308)");
  } catch (const std::exception&) {
    fail(node, key, "expected a number, got '" + text + "'");
  }
  if (!std::isfinite(value)) fail(node, key, "expected a finite number, got '" + text + "'");
  if (!(value > min_value || (!exclusive_min && value == min_value)))
    fail(node, key,
         std::string("must be ") + (exclusive_min ? "greater than " : "at least ") +
             trim_number(min_value) + ", got " + text);
  return value;
}

bool YamlReader::boolean(const YAML::Node& node, const std::string& key) const {
  const std::string text = scalar(node, key);
  if (text == "true" || text == "True" || text == "yes") return true;
  if (text == "false" || text == "False" || text == "no") return false;
  fail(node, key, "expected true or false, got '" + text + "'");
}

std::vector<YAML::Node> YamlReader::list(const YAML::Node& node, const std::string& key) const {
  std::vector<YAML::Node> items;
  if (node.IsSequence()) {
    if (node.size() == 0) fail(node, key, "the list is empty");
    for (const auto& item : node) items.push_back(item);
  } else if (node.IsScalar()) {
    items.push_back(node);
  } else {
    fail(node, key, "expected a value or a list, got " + kind(node));
  }
  return items;
}

}  // namespace attnbench
