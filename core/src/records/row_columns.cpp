#include "records/row_columns.hpp"

#include "records/fields.hpp"

#include <stdexcept>

namespace attnbench {

const std::vector<std::string>& numeric_row_columns() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& f : row_fields())
      if (f.predictable) out.push_back(f.name);
    return out;
  }();
  return names;
}

std::optional<double> numeric_row_value(const Row& row, const std::string& column) {
  const Field<Row>* f = find_field(row_fields(), column);
  if (!f || !f->predictable) throw std::out_of_range("no numeric column '" + column + "'");
  const FieldValue v = f->get(row);
  if (const double* d = std::get_if<double>(&v)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::nullopt;
}

}  // namespace attnbench
