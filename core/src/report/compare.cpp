#include "report/compare.hpp"

#include "base/errors.hpp"
#include "report/schema.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace attnbench {

const std::vector<Metric>& metric_table() {
  static const std::vector<Metric> metrics = {
      {"time_ms_median", false, "time_rel_noise", "", ""},
      {"time_ms_p10", false, "time_rel_noise", "", ""},
      {"time_ms_p90", false, "time_rel_noise", "", ""},
      {"tflops", true, "time_rel_noise", "", ""},
      {"pct_of_peak", true, "time_rel_noise", "", ""},
      {"cpu_us_median", false, "", "cpu_us_p10", "cpu_us_p90"},
      {"aten_ops_per_call", false, "", "", ""},
      {"aten_ops_nested_per_call", false, "", "", ""},
      {"aten_copies_per_call", false, "", "", ""},
      {"kernels_per_call", false, "", "", ""},
      {"memcpy_per_call", false, "", "", ""},
      {"memset_per_call", false, "", "", ""},
      {"peak_mem_mib", false, "", "", ""},
      {"rel_err", false, "", "", ""},
  };
  return metrics;
}

const Metric& find_metric(const std::string& name) {
  std::string known;
  for (const auto& m : metric_table()) {
    if (m.name == name) return m;
    known += (known.empty() ? "" : ", ") + m.name;
  }
  throw InputError("'" + name + "' is not a metric compare can judge; use one of " + known);
}

namespace {

std::optional<double> value(const CsvTable& t, size_t row, const std::string& column) {
  const int c = t.column(column);
  if (c < 0) return std::nullopt;
  const std::string& text = t.rows[row][static_cast<size_t>(c)];
  if (text.empty()) return std::nullopt;
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    throw InputError(t.path + ": column '" + column + "' holds '" + text + "', not a number");
  }
}

// Relative standard deviation of one measurement; 0 for deterministic metrics (counts, errors).
double noise(const CsvTable& t, size_t row, const Metric& metric) {
  if (!metric.noise_column.empty()) return value(t, row, metric.noise_column).value_or(0);
  const auto median = value(t, row, metric.name), p10 = value(t, row, metric.p10_column),
             p90 = value(t, row, metric.p90_column);
  // For a normal distribution p90 - p10 spans 2.563 standard deviations.
  if (median && p10 && p90 && *median != 0) return (*p90 - *p10) / (2.563 * std::abs(*median));
  return 0;
}

// Each flag of either row once, in the order met: a comparison of a throttled run says so.
std::string merged_flags(const CsvTable& bt, size_t br, const CsvTable& ct, size_t cr) {
  std::vector<std::string> seen;
  for (const std::string& text : {bt.column("flags") < 0 ? std::string() : bt.at(br, "flags"),
                                  ct.column("flags") < 0 ? std::string() : ct.at(cr, "flags")}) {
    size_t start = 0;
    while (start < text.size()) {
      const size_t end = std::min(text.find(';', start), text.size());
      const std::string flag = text.substr(start, end - start);
      if (!flag.empty() && std::find(seen.begin(), seen.end(), flag) == seen.end())
        seen.push_back(flag);
      start = end + 1;
    }
  }
  std::string out;
  for (const auto& f : seen) out += (out.empty() ? "" : ";") + f;
  return out;
}

struct Pairing {
  size_t base_row, candidate_row;
};

ComparedRow judge(const CsvTable& bt, size_t br, const CsvTable& ct, size_t cr,
                  const Metric& metric, const CompareOptions& options) {
  ComparedRow row;
  row.point_id = ct.at(cr, "point_id");
  row.backend = ct.at(cr, "backend");
  row.timing_mode = ct.at(cr, "timing_mode");
  row.base_status = bt.at(br, "status");
  row.candidate_status = ct.at(cr, "status");
  row.base = value(bt, br, metric.name);
  row.candidate = value(ct, cr, metric.name);
  row.flags = merged_flags(bt, br, ct, cr);
  if (row.base_status != "ok" || row.candidate_status != "ok" || !row.base || !row.candidate)
    return row;
  if (*row.base == *row.candidate) {
    row.verdict = Verdict::same;
    return row;
  }
  row.ratio = *row.base != 0 ? *row.candidate / *row.base : INFINITY;
  if (!metric.deterministic())
    row.band = std::max(options.min_band, noise(bt, br, metric) + noise(ct, cr, metric));
  const double change = row.ratio - 1;
  if (std::abs(change) <= row.band) {
    row.verdict = Verdict::within_noise;
    return row;
  }
  const bool worse = metric.higher_is_better ? change < 0 : change > 0;
  row.verdict = worse ? Verdict::worse : Verdict::better;
  row.regression = worse && options.fail_on_regression_pct &&
                   std::abs(change) * 100 > *options.fail_on_regression_pct;
  return row;
}

Comparison compare_pairs(const std::vector<Pairing>& pairs, const CsvTable& bt, const CsvTable& ct,
                         const CompareOptions& options, Comparison c) {
  c.fail_on_regression_pct = options.fail_on_regression_pct;
  for (const auto& name : options.metrics) {
    MetricComparison mc;
    mc.metric = find_metric(name);
    std::map<std::string, std::pair<double, int>> log_sum;  // per backend: sum of log ratios, count
    for (const auto& p : pairs) {
      ComparedRow row = judge(bt, p.base_row, ct, p.candidate_row, mc.metric, options);
      if (row.verdict != Verdict::not_comparable && std::isfinite(row.ratio) && row.ratio > 0) {
        auto& acc = log_sum[row.backend];
        acc.first += std::log(row.ratio);
        acc.second += 1;
        ++c.compared;
      }
      c.regressions += row.regression;
      mc.rows.push_back(std::move(row));
    }
    for (const auto& [backend, acc] : log_sum)
      mc.geomeans.push_back({backend, std::exp(acc.first / acc.second), acc.second});
    c.metrics.push_back(std::move(mc));
  }
  return c;
}

std::string key(const CsvTable& t, size_t r, bool with_backend) {
  return t.at(r, "point_id") + "|" + (with_backend ? t.at(r, "backend") + "|" : "") +
         t.at(r, "timing_mode");
}

}  // namespace

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
  for (const auto& m : metrics) {
    const Metric& metric = find_metric(m);
    for (const std::string& column :
         {metric.name, metric.noise_column, metric.p10_column, metric.p90_column})
      if (!column.empty() && table.column(column) < 0)
        throw InputError(table.path + ": no column '" + column + "' to compare " + metric.name);
  }
}

Comparison compare_reports(const CsvTable& base, const CsvTable& candidate,
                           const CompareOptions& options) {
  check_report(base, options.metrics);
  check_report(candidate, options.metrics);
  std::map<std::string, size_t> base_rows;
  for (size_t r = 0; r < base.rows.size(); ++r) base_rows[key(base, r, true)] = r;
  std::vector<Pairing> pairs;
  Comparison c;
  for (size_t r = 0; r < candidate.rows.size(); ++r) {
    auto it = base_rows.find(key(candidate, r, true));
    if (it == base_rows.end()) {
      ++c.only_in_candidate;
      continue;
    }
    pairs.push_back({it->second, r});
  }
  c.base_label = "base";
  c.candidate_label = "new";
  c.base_path = base.path;
  c.candidate_path = candidate.path;
  c.base_rows = base.rows.size();
  c.candidate_rows = candidate.rows.size();
  c.joined = pairs.size();
  c.only_in_base = base.rows.size() - pairs.size();
  return compare_pairs(pairs, base, candidate, options, std::move(c));
}

Comparison compare_backends(const CsvTable& table, const CompareOptions& options) {
  check_report(table, options.metrics);
  const std::string& baseline = options.baseline_backend.value();
  std::map<std::string, size_t> base_rows;
  for (size_t r = 0; r < table.rows.size(); ++r)
    if (table.at(r, "backend") == baseline) base_rows[key(table, r, false)] = r;
  if (base_rows.empty())
    throw InputError(table.path + ": no rows for the baseline backend '" + baseline + "'");
  std::vector<Pairing> pairs;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    if (table.at(r, "backend") == baseline) continue;
    auto it = base_rows.find(key(table, r, false));
    if (it != base_rows.end()) pairs.push_back({it->second, r});
  }
  Comparison c;
  c.base_label = baseline;
  c.candidate_label = "backend";
  c.base_path = c.candidate_path = table.path;
  c.base_rows = c.candidate_rows = table.rows.size();
  c.joined = pairs.size();
  return compare_pairs(pairs, table, table, options, std::move(c));
}

}  // namespace attnbench
