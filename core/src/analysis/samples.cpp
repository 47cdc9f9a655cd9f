// A report's raw timing samples (<report>.samples.csv): read, and checked against the report's
// rows.
#include "analysis/compare.hpp"

#include "base/errors.hpp"
#include "base/field.hpp"
#include "base/stats.hpp"
#include "write/report_writer.hpp"
#include "write/schema.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

namespace attnbench {

std::string sample_key(const std::string& point, const std::string& backend,
                       const std::string& mode) {
  return point + "|" + backend + "|" + mode;
}

SampleSets read_samples(const std::string& report_csv) {
  const std::string path = sibling(report_csv, side::samples);
  SampleSets sets;
  if (!std::filesystem::exists(path)) return sets;
  const CsvTable t = read_csv(path);
  for (const char* needed : {"point_id", "backend", "timing_mode", "time_ms"})
    if (t.column(needed) < 0) throw InputError(path + ": no column '" + std::string(needed) + "'");
  for (size_t r = 0; r < t.rows.size(); ++r)
    if (auto v = t.number(r, "time_ms")) {
      if (!std::isfinite(*v) || *v <= 0)
        throw InputError(t.where(r) + ": time_ms is " + t.at(r, "time_ms") +
                         "; a sample time must be positive and finite");
      sets[sample_key(t.at(r, "point_id"), t.at(r, "backend"), t.at(r, "timing_mode"))].push_back(
          *v);
    }
  return sets;
}

void check_samples(const CsvTable& report, const SampleSets& samples) {
  if (samples.empty()) return;
  const std::string path = sibling(report.path, side::samples);
  // Each series against the rows it came from: the median of a series pooled over repetitions lies
  // between the smallest and largest of those rows' medians. A file left from another run (or
  // another fingerprint, or rows since rerun) fails that.
  std::map<std::string, std::pair<double, double>> medians;
  for (const Row& row : typed_rows(report)) {
    if (row.status != Status::ok || !row.time_ms_median) continue;
    const double m = *row.time_ms_median;
    const std::string k = sample_key(row.point_id, row.backend, to_string(row.timing_mode));
    auto [it, fresh] = medians.emplace(k, std::pair{m, m});
    it->second = {std::min(it->second.first, m), std::max(it->second.second, m)};
  }
  for (const auto& [k, series] : samples) {
    auto it = medians.find(k);
    if (it == medians.end())
      throw InputError(path + " does not belong to " + report.path + ": it has samples of " + k +
                       ", which has no ok row there (a side file left from another run?)");
    const double median = summarize(series).median;
    const double low = it->second.first * (1 - 1e-4), high = it->second.second * (1 + 1e-4);
    if (median < low || median > high)
      throw InputError(path + " does not belong to " + report.path + ": the samples of " + k +
                       " have median " + format_number(median) + " ms, the report says " +
                       format_number(it->second.first) +
                       " ms (a side file left from another run?)");
  }
}

}  // namespace attnbench
