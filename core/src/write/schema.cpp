#include "write/schema.hpp"

#include "base/errors.hpp"
#include "base/names.hpp"
#include "records/fields.hpp"
#include "write/csv.hpp"

namespace attnbench {

namespace {

template <class R>
std::vector<std::string> header_of(const std::vector<Field<R>>& fields) {
  std::vector<std::string> out{"schema_version"};
  for (const auto& f : fields) out.push_back(f.name);
  return out;
}

template <class R>
std::vector<std::string> fields_of(const std::vector<Field<R>>& fields, const R& row) {
  std::vector<std::string> out{std::to_string(kCsvSchemaVersion)};
  for (const auto& f : fields) out.push_back(field_text(f.get(row)));
  return out;
}

}  // namespace

bool readable_schema_version(const std::string& text) {
  for (int v = 1; v <= kCsvSchemaVersion; ++v)
    if (text == std::to_string(v)) return true;
  return false;
}

std::vector<std::string> row_header() { return header_of(row_fields()); }
std::vector<std::string> row_cells(const Row& row) { return fields_of(row_fields(), row); }
Row row_from_cells(const CsvTable& table, size_t r) {
  Row row;
  for (const auto& f : row_fields()) {
    const int c = table.column(f.name);
    if (c < 0) continue;
    const std::string& text = table.rows.at(r).at(static_cast<size_t>(c));
    try {
      f.set(row, parse_field_text(f.type, text));
    } catch (const std::invalid_argument& e) {
      // An empty cell is "not given": a field that cannot be empty keeps its default, as when its
      // column is missing (a report written by hand or by another tool).
      if (text.empty()) continue;
      throw InputError(table.where(r) + ": column '" + f.name + "' holds '" + text +
                       "': " + e.what());
    }
  }
  return row;
}

std::vector<Row> typed_rows(const CsvTable& table) {
  std::vector<Row> rows;
  rows.reserve(table.rows.size());
  for (size_t r = 0; r < table.rows.size(); ++r) rows.push_back(row_from_cells(table, r));
  return rows;
}

std::vector<std::string> kernel_row_header() { return header_of(kernel_row_fields()); }
std::vector<std::string> kernel_row_cells(const KernelRow& row) {
  return fields_of(kernel_row_fields(), row);
}

std::vector<std::string> sample_header() {
  return {"point_id", "backend", "timing_mode", "repetition", "sample", "time_ms", "sm_clock_mhz"};
}

std::vector<std::string> sample_fields(const std::string& point_id, const std::string& backend,
                                       TimingMode mode, int repetition, size_t index,
                                       double time_ms, std::optional<double> sm_clock_mhz) {
  return {point_id,
          backend,
          to_string(mode),
          std::to_string(repetition),
          std::to_string(index),
          format_number(time_ms),
          sm_clock_mhz ? format_number(*sm_clock_mhz) : std::string()};
}

}  // namespace attnbench
