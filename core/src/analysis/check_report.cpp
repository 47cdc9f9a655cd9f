// What every reader of a report checks first (compare, summary, export, merge, plot): this
// attnbench's schema, the key columns, and for compare the metric's columns and values.
#include "analysis/compare.hpp"

#include "base/errors.hpp"
#include "write/schema.hpp"

#include <cmath>
#include <map>
#include <tuple>

namespace attnbench {

void require_one_build_per_backend(const std::vector<const CsvTable*>& tables) {
  std::map<std::string, std::pair<std::string, std::string>> first;  // backend -> build, where
  for (const CsvTable* t : tables) {
    if (t->column("backend_build") < 0) continue;
    for (size_t r = 0; r < t->rows.size(); ++r) {
      const std::string& build = t->at(r, "backend_build");
      if (build.empty()) continue;  // a backend that never loaded: its rows say why
      const std::string& backend = t->at(r, "backend");
      const auto [seen, fresh] = first.emplace(backend, std::make_pair(build, t->where(r)));
      if (!fresh && seen->second.first != build)
        throw InputError(t->where(r) + ": backend '" + backend + "' was measured with build " +
                         build + ", at " + seen->second.second + " with build " +
                         seen->second.first +
                         ": two versions of its code (a plugin rebuilt, a source or a header it "
                         "includes edited, a Python file changed) in one report");
    }
  }
}

void check_report(const CsvTable& table, const std::vector<std::string>& metrics) {
  const int c = table.column("schema_version");
  if (c < 0) throw InputError(table.path + ": not an attnbench report (no schema_version column)");
  for (size_t r = 0; r < table.rows.size(); ++r)
    if (!readable_schema_version(table.rows[r][static_cast<size_t>(c)]))
      throw InputError(table.path + ": schema version '" + table.rows[r][static_cast<size_t>(c)] +
                       "', this attnbench reads versions 1 to " +
                       std::to_string(kCsvSchemaVersion));
  for (const char* needed : {"point_id", "backend", "timing_mode", "status"})
    if (table.column(needed) < 0)
      throw InputError(table.path + ": no column '" + std::string(needed) + "'");
  // One row per (point, backend, mode, repetition): a second would be taken for a repetition of
  // the first, or hide it.
  std::map<std::tuple<std::string, std::string, std::string, int64_t>, size_t> seen;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const auto key = std::make_tuple(table.at(r, "point_id"), table.at(r, "backend"),
                                     table.at(r, "timing_mode"),
                                     table.integer(r, "repetition").value_or(0));  // absent: 0
    if (const auto [first, fresh] = seen.emplace(key, r); !fresh)
      throw InputError(table.where(r) + ": the same point, backend, timing mode and repetition as " +
                       "line " + std::to_string(table.lines[first->second]) + " (" +
                       std::get<0>(key) + " " + std::get<1>(key) + " " + std::get<2>(key) +
                       "): a report holds each once (two reports joined by hand? attnbench " +
                       "merge joins them)");
  }
  require_one_build_per_backend({&table});
  for (const auto& m : metrics) {
    const Metric& metric = find_metric(m);
    for (const std::string& column :
         {metric.name, metric.noise_column, metric.p10_column, metric.p90_column})
      if (!column.empty() && table.column(column) < 0)
        throw InputError(table.path + ": no column '" + column + "' to compare " + metric.name);
    // What compare judges must be a measurement: a time of 0, below 0 or NaN (a hand-edited or
    // broken report) would be judged as a huge improvement. Read off the cells, before the rows
    // are typed, so that a NaN is refused with what compare judges.
    for (size_t r = 0; r < table.rows.size(); ++r) {
      if (table.at(r, "status") != to_string(Status::ok)) continue;
      const auto v = table.number(r, metric.name);
      if (v && (!std::isfinite(*v) || (metric.deterministic() ? *v < 0 : *v <= 0)))
        throw InputError(
            table.where(r) + ": " + metric.name + " is " + table.at(r, metric.name) +
            " in an ok row; compare judges only " +
            (metric.deterministic() ? "finite values of at least 0" : "positive finite values"));
    }
  }
}

}  // namespace attnbench
