#include "compare.hpp"

#include "errors.hpp"
#include "table.hpp"

#include <cmath>
#include <cstdio>
#include <map>

namespace attnbench {

namespace {

bool higher_is_better(const std::string& metric) { return metric == "tflops" || metric == "pct_of_peak"; }

std::optional<double> value(const CsvTable& t, size_t row, const std::string& column) {
  const int c = t.column(column);
  if (c < 0) return std::nullopt;
  const std::string& text = t.rows[row][static_cast<size_t>(c)];
  if (text.empty()) return std::nullopt;
  try {
    return std::stod(text);
  } catch (const std::exception&) {
    throw InputError(t.path + ": column '" + column + "' holds '" + text + "', not a number");
  }
}

// Relative standard deviation of one measurement; 0 for deterministic metrics (counts, errors).
double noise(const CsvTable& t, size_t row, const std::string& metric) {
  if (metric == "time_ms_median" || metric == "tflops" || metric == "pct_of_peak")
    return value(t, row, "time_rel_noise").value_or(0);
  const std::string suffix = "_median";
  if (metric.size() > suffix.size() && metric.compare(metric.size() - suffix.size(), suffix.size(), suffix) == 0) {
    const std::string stem = metric.substr(0, metric.size() - suffix.size());
    const auto median = value(t, row, metric), p10 = value(t, row, stem + "_p10"), p90 = value(t, row, stem + "_p90");
    // For a normal distribution p90 - p10 spans 2.563 standard deviations.
    if (median && p10 && p90 && *median != 0) return (*p90 - *p10) / (2.563 * *median);
  }
  return 0;
}

std::string fmt(double v, const char* spec = "%.4g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

struct Pairing {
  std::string point_id, label, mode;
  size_t base_row, new_row;
};

struct Verdict {
  std::string text;
  bool comparable = false;
  bool worse = false;
  double ratio = 1;
};

Verdict judge(const CsvTable& bt, size_t br, const CsvTable& nt, size_t nr, const std::string& metric,
              double min_band) {
  Verdict v;
  const std::string& bs = bt.at(br, "status");
  const std::string& ns = nt.at(nr, "status");
  if (bs != "ok" || ns != "ok") {
    v.text = "n/a: " + bs + " -> " + ns;
    return v;
  }
  const auto b = value(bt, br, metric), n = value(nt, nr, metric);
  if (!b || !n) {
    v.text = "n/a: not measured";
    return v;
  }
  v.comparable = true;
  if (*b == 0 && *n == 0) {
    v.text = "same";
    return v;
  }
  v.ratio = *b != 0 ? *n / *b : INFINITY;
  const double base_noise = noise(bt, br, metric), new_noise = noise(nt, nr, metric);
  const bool deterministic = base_noise == 0 && new_noise == 0;
  const double band = deterministic ? 0 : std::max(min_band, base_noise + new_noise);
  const double change = v.ratio - 1;
  if (std::abs(change) <= band) {
    v.text = deterministic ? "same" : "within noise";
    return v;
  }
  const bool up = change > 0;
  v.worse = higher_is_better(metric) ? !up : up;
  v.text = v.worse ? "worse" : "better";
  if (!deterministic) v.text += " (band " + fmt(100 * band, "%.1f") + "%)";
  return v;
}

CompareResult report(const std::vector<Pairing>& pairs, const CsvTable& bt, const CsvTable& nt,
                     const CompareOptions& options, const std::string& base_label,
                     const std::string& new_label, std::ostream& out) {
  CompareResult result;
  for (const auto& metric : options.metrics) {
    TextTable table;
    table.header = {"point_id", "backend", "mode", base_label, new_label, "ratio", "verdict"};
    std::map<std::string, std::pair<double, int>> log_sum;  // per label: sum of log ratios, count
    for (const auto& p : pairs) {
      const Verdict v = judge(bt, p.base_row, nt, p.new_row, metric, options.min_band);
      auto cell = [&](const CsvTable& t, size_t r) { auto x = value(t, r, metric); return x ? fmt(*x) : std::string(); };
      table.rows.push_back({p.point_id, p.label, p.mode, cell(bt, p.base_row), cell(nt, p.new_row),
                            v.comparable ? fmt(v.ratio, "%.3f") : "", v.text});
      if (v.comparable && std::isfinite(v.ratio) && v.ratio > 0) {
        auto& acc = log_sum[p.label];
        acc.first += std::log(v.ratio);
        acc.second += 1;
        ++result.compared;
      }
      if (v.worse && options.fail_on_regression_pct &&
          std::abs(v.ratio - 1) * 100 > *options.fail_on_regression_pct)
        ++result.regressions;
    }
    out << (options.markdown ? "### " : "== ") << metric << (options.markdown ? "\n\n" : "\n");
    table.print(out, options.markdown);
    TextTable summary;
    summary.header = {"backend", "geomean ratio", "rows"};
    for (const auto& [label, acc] : log_sum)
      summary.rows.push_back({label, fmt(std::exp(acc.first / acc.second), "%.3f"), std::to_string(acc.second)});
    out << (options.markdown ? "\n" : "\n");
    summary.print(out, options.markdown);
    out << '\n';
  }
  if (options.fail_on_regression_pct)
    out << result.regressions << " regression(s) worse than " << fmt(*options.fail_on_regression_pct) << "%\n";
  return result;
}

std::string key(const CsvTable& t, size_t r, bool with_backend) {
  return t.at(r, "point_id") + "|" + (with_backend ? t.at(r, "backend") + "|" : "") + t.at(r, "timing_mode");
}

}  // namespace

void check_report(const CsvTable& table, const std::vector<std::string>& metrics) {
  const int c = table.column("schema_version");
  if (c < 0) throw InputError(table.path + ": not an attnbench report (no schema_version column)");
  for (size_t r = 0; r < table.rows.size(); ++r)
    if (table.rows[r][static_cast<size_t>(c)] != std::to_string(kCsvSchemaVersion))
      throw InputError(table.path + ": schema version '" + table.rows[r][static_cast<size_t>(c)] +
                       "', this attnbench reads version " + std::to_string(kCsvSchemaVersion));
  for (const char* needed : {"point_id", "backend", "timing_mode", "status"})
    if (table.column(needed) < 0) throw InputError(table.path + ": no column '" + std::string(needed) + "'");
  for (const auto& m : metrics)
    if (table.column(m) < 0) throw InputError(table.path + ": no column '" + m + "' to compare");
}

CompareResult compare_reports(const CsvTable& base, const CsvTable& candidate, const CompareOptions& options,
                              std::ostream& out) {
  check_report(base, options.metrics);
  check_report(candidate, options.metrics);
  std::map<std::string, size_t> base_rows;
  for (size_t r = 0; r < base.rows.size(); ++r) base_rows[key(base, r, true)] = r;
  std::vector<Pairing> pairs;
  size_t only_new = 0;
  for (size_t r = 0; r < candidate.rows.size(); ++r) {
    auto it = base_rows.find(key(candidate, r, true));
    if (it == base_rows.end()) {
      ++only_new;
      continue;
    }
    pairs.push_back({candidate.at(r, "point_id"), candidate.at(r, "backend"), candidate.at(r, "timing_mode"), it->second, r});
  }
  out << "base: " << base.path << " (" << base.rows.size() << " rows), new: " << candidate.path << " ("
      << candidate.rows.size() << " rows), joined " << pairs.size() << ", only in base "
      << base.rows.size() - pairs.size() << ", only in new " << only_new << "\n\n";
  return report(pairs, base, candidate, options, "base", "new", out);
}

CompareResult compare_backends(const CsvTable& table, const CompareOptions& options, std::ostream& out) {
  check_report(table, options.metrics);
  const std::string& baseline = *options.baseline_backend;
  std::map<std::string, size_t> base_rows;
  for (size_t r = 0; r < table.rows.size(); ++r)
    if (table.at(r, "backend") == baseline) base_rows[key(table, r, false)] = r;
  if (base_rows.empty()) throw InputError(table.path + ": no rows for the baseline backend '" + baseline + "'");
  std::vector<Pairing> pairs;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    if (table.at(r, "backend") == baseline) continue;
    auto it = base_rows.find(key(table, r, false));
    if (it == base_rows.end()) continue;
    pairs.push_back({table.at(r, "point_id"), table.at(r, "backend"), table.at(r, "timing_mode"), it->second, r});
  }
  out << table.path << ": every backend against '" << baseline << "' (ratio = backend / " << baseline << ")\n\n";
  return report(pairs, table, table, options, baseline, "backend", out);
}

}  // namespace attnbench
