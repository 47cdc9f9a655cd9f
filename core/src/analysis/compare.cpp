#include "analysis/compare.hpp"

#include "analysis/clocks.hpp"
#include "analysis/compare_flags.hpp"
#include "analysis/normalize.hpp"
#include "base/errors.hpp"
#include "base/field.hpp"
#include "base/hash.hpp"
#include "base/stats.hpp"
#include "records/fields.hpp"
#include "write/schema.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>

namespace attnbench {

const std::vector<Metric>& metric_table() {
  static const std::vector<Metric> metrics = [] {
    std::vector<Metric> out;
    for (const auto& f : row_fields()) {
      if (!f.metric) continue;
      const MetricTraits& m = *f.metric;
      out.push_back({f.name, m.higher_is_better, m.noise_column, m.p10_column, m.p90_column,
                     m.threshold, m.from_time_samples, m.host_time});
    }
    return out;
  }();
  return metrics;
}

std::string to_string(IntervalBasis basis) {
  switch (basis) {
    case IntervalBasis::exact: return "exact";
    case IntervalBasis::repetitions: return "repetitions";
    case IntervalBasis::samples: return "samples";
    case IntervalBasis::noise: return "noise";
  }
  return "?";
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

// Relative standard deviation of one measurement; 0 for deterministic metrics (counts, errors).
double noise(const Row& row, const Metric& metric) {
  if (!metric.noise_column.empty()) return row_number(row, metric.noise_column).value_or(0);
  if (metric.p10_column.empty()) return 0;
  const auto median = row_number(row, metric.name), p10 = row_number(row, metric.p10_column),
             p90 = row_number(row, metric.p90_column);
  // For a normal distribution p90 - p10 spans 2.563 standard deviations.
  if (median && p10 && p90 && *median != 0) return (*p90 - *p10) / (2.563 * std::abs(*median));
  return 0;
}

// A report's rows, typed, and the file they came from.
struct Rows {
  std::string path;
  std::vector<Row> rows;
  const Row& operator[](size_t r) const { return rows[r]; }
};

// The rows of one (point, backend, timing mode): one per repetition, by index into its Rows.
using Group = std::vector<size_t>;

struct Pairing {
  Group base, candidate;
};

// The first status of a group that is not ok, else ok.
std::string group_status(const Rows& t, const Group& g) {
  for (size_t r : g)
    if (t[r].status != Status::ok) return to_string(t[r].status);
  return to_string(Status::ok);
}

// The metric in every row of a group; empty when a row lacks it.
std::vector<double> group_values(const Rows& t, const Group& g, const std::string& metric) {
  std::vector<double> out;
  for (size_t r : g) {
    const auto v = row_number(t[r], metric);
    if (!v) return {};
    out.push_back(*v);
  }
  return out;
}

double geometric_mean(const std::vector<double>& values) {
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

const std::vector<double>* samples_of(const SampleSets& sets, const ComparedRow& row,
                                      const std::string& backend) {
  auto it = sets.find(sample_key(row.point_id, backend, row.timing_mode));
  return it == sets.end() || it->second.size() < 5 ? nullptr : &it->second;
}

// The verdict from where the ratio lies: beyond the threshold on one side, inside it, or across it.
Verdict verdict_of(double low, double high, double threshold, bool higher_is_better) {
  // u > 1 is worse, whichever way the metric points.
  const double worse_low = higher_is_better ? 1 / high : low;
  const double worse_high = higher_is_better ? 1 / low : high;
  const double up = 1 + threshold, down = 1 / (1 + threshold);
  if (worse_low > up) return Verdict::worse;
  if (worse_high < down) return Verdict::better;
  if (worse_low >= down && worse_high <= up) return Verdict::same;
  return Verdict::unsure;
}

// Without repetitions the interval knows only each run's own samples, not how far two runs of the
// same code drift apart (on the H200 up to 4.5%, on a busy 2-core machine a third). So a single
// run's better or worse is held to more: it must hold with the interval widened by the metric's
// threshold (the drift it allows), and a row whose measurement missed its noise target cannot be
// called at all. Else it is `unsure`, saying why and how many repetitions per side would tell.
void judge_single_runs(ComparedRow& row, const Metric& metric, const Group& bg, const Group& cg,
                       const Rows& bt, const Rows& ct) {
  if (row.verdict != Verdict::better && row.verdict != Verdict::worse) return;
  const bool missed = row.flags.find("noise_target_missed") != std::string::npos;
  double base_noise = 0, new_noise = 0;  // each side's own spread (relative)
  for (size_t r : bg) base_noise = std::max(base_noise, noise(bt[r], metric));
  for (size_t r : cg) new_noise = std::max(new_noise, noise(ct[r], metric));
  // A measurement that missed its noise target has an interval not to be trusted, but a change
  // far past any noise is told all the same (a 298x slowdown is worse whatever the noise): its
  // interval is widened by half again a side, or twice its own spread, besides the drift.
  const double untrusted =
      missed ? (1 + std::max(0.5, 2 * base_noise)) * (1 + std::max(0.5, 2 * new_noise)) : 1.0;
  const double widen = (1 + row.threshold) * untrusted;
  const Verdict widened =
      verdict_of(row.ci_low / widen, row.ci_high * widen, row.threshold, metric.higher_is_better);
  if (widened == row.verdict) return;
  row.verdict = Verdict::unsure;
  row.unsure = missed ? Unsure::noise_target : Unsure::single_runs;
  char change[200];
  std::snprintf(change, sizeof change,
                ": the change, x%.3g, is not past what that allows (an interval widened x%.3g)",
                row.ratio, widen);
  row.why_unsure =
      std::string(missed ? "a measurement missed its noise target" : "single runs: drift unknown") +
      change;
  // Repetitions per side for a t-interval (t ~ 2.5 at few repetitions) of the observed change to
  // clear the threshold, the runs' spread taken as at least each row's noise and 1%.
  const double margin = std::abs(std::log(row.ratio)) - std::log(1 + row.threshold);
  const double spread = std::max({0.01, base_noise, new_noise});
  row.repetitions_needed =
      margin <= 0
          ? 0
          : std::max(3, static_cast<int>(std::ceil(2 * std::pow(2.5 * spread / margin, 2))));
}

ComparedRow judge(const Rows& bt, const Group& bg, const Rows& ct, const Group& cg,
                  const Metric& metric, const CompareOptions& options, const SampleSets& bs,
                  const SampleSets& cs, std::optional<RatioInterval>& time_interval) {
  ComparedRow row;
  const size_t br = bg.front(), cr = cg.front();
  row.point_id = ct[cr].point_id;
  row.backend = ct[cr].backend;
  row.timing_mode = to_string(ct[cr].timing_mode);
  row.base_repetitions = static_cast<int>(bg.size());
  row.candidate_repetitions = static_cast<int>(cg.size());
  row.base_status = group_status(bt, bg);
  row.candidate_status = group_status(ct, cg);
  for (size_t r : bg) row.flags = merged_flags(row.flags, bt[r].flags);
  for (size_t r : cg) row.flags = merged_flags(row.flags, ct[r].flags);
  if (metric.host_time)
    for (size_t b : bg)
      for (size_t c : cg) row.flags = merged_flags(row.flags, host_flags(bt[b], ct[c]));
  std::vector<double> base_values = group_values(bt, bg, metric.name);
  std::vector<double> new_values = group_values(ct, cg, metric.name);
  if (row.base_status != "ok" || row.candidate_status != "ok" || base_values.empty() ||
      new_values.empty())
    return row;
  // The clocks behind a time metric, and the values at the base's clock when asked.
  const SideClocks clocks =
      metric.from_time_samples ? side_clocks(bt.rows, bg, ct.rows, cg) : SideClocks{};
  const bool scaled = options.normalize_clock && clocks.known();
  if (scaled) scale_to_base_clock(clocks, metric.higher_is_better, base_values, new_values);
  row.base = summarize(base_values).median;  // the median over repetitions
  row.candidate = summarize(new_values).median;
  row.ratio = *row.base != 0 ? *row.candidate / *row.base : INFINITY;
  row.ci_low = row.ci_high = row.ratio;
  if (!metric.deterministic()) {
    row.threshold = options.threshold_pct ? *options.threshold_pct / 100 : metric.threshold;
    // The raw samples are at their own clocks: a normalized row is judged on its noise.
    const std::vector<double>* base_samples =
        scaled ? nullptr : samples_of(bs, row, bt[br].backend);
    const std::vector<double>* new_samples = scaled ? nullptr : samples_of(cs, row, row.backend);
    if (const auto repeated = repetition_ratio_interval(base_values, new_values)) {
      // Repetitions: each one observation, so run-to-run drift is in the interval, which narrows
      // as repetitions are added. Values and ratio are the repetitions' geometric means.
      row.base = geometric_mean(base_values);
      row.candidate = geometric_mean(new_values);
      row.ratio = *row.candidate / *row.base;
      row.ci_low = repeated->low;
      row.ci_high = repeated->high;
      row.interval_from = IntervalBasis::repetitions;
    } else if (metric.from_time_samples && base_samples && new_samples) {
      // The interval of the time ratio, bootstrapped once per pair whatever the metrics; a
      // higher-is-better metric of the time is its inverse.
      if (!time_interval)
        time_interval =
            median_ratio_interval(*base_samples, *new_samples,
                                  fnv1a(sample_key(row.point_id, row.backend, row.timing_mode)));
      const RatioInterval t = *time_interval;
      row.ci_low = metric.higher_is_better ? 1 / t.high : t.low;
      row.ci_high = metric.higher_is_better ? 1 / t.low : t.high;
      row.interval_from = IntervalBasis::samples;
    } else {
      double base_noise = 0, new_noise = 0;
      for (size_t r : bg) base_noise = std::max(base_noise, noise(bt[r], metric));
      for (size_t r : cg) new_noise = std::max(new_noise, noise(ct[r], metric));
      row.band = std::max(options.min_band, base_noise + new_noise);
      row.ci_low = row.ratio / (1 + row.band);
      row.ci_high = row.ratio * (1 + row.band);
      row.interval_from = IntervalBasis::noise;
    }
  }
  if (*row.base == *row.candidate && metric.deterministic()) {
    row.verdict = Verdict::same;
    return row;
  }
  row.verdict = verdict_of(row.ci_low, row.ci_high, row.threshold, metric.higher_is_better);
  if (!metric.deterministic() && row.interval_from != IntervalBasis::repetitions)
    judge_single_runs(row, metric, bg, cg, bt, ct);
  if (metric.from_time_samples) hold_for_clocks(row, clocks, options.normalize_clock);
  const double change = metric.higher_is_better ? 1 / row.ratio - 1 : row.ratio - 1;
  row.regression = row.verdict == Verdict::worse && options.fail_on_regression_pct &&
                   change * 100 > *options.fail_on_regression_pct;
  return row;
}

// The geometric mean of a backend's ratios and its 95% interval: each row's interval read as a
// normal spread of its log ratio, the rows independent, so the geomean's spread is theirs in
// quadrature over the count. It is the uncertainty of the measurements, not of the choice of
// points.
struct GeomeanSum {
  double log_sum = 0, variance_sum = 0;
  int rows = 0;
  void add(const ComparedRow& row) {
    log_sum += std::log(row.ratio);
    if (row.ci_low > 0 && std::isfinite(row.ci_high)) {
      const double se = (std::log(row.ci_high) - std::log(row.ci_low)) / (2 * kZ95);
      variance_sum += se * se;
    }
    ++rows;
  }
  Geomean geomean(const std::string& backend) const {
    const double mean = log_sum / rows, half = kZ95 * std::sqrt(variance_sum) / rows;
    return {backend, std::exp(mean), rows, std::exp(mean - half), std::exp(mean + half)};
  }
  static constexpr double kZ95 = 1.959964;
};

Comparison compare_pairs(const std::vector<Pairing>& pairs, const Rows& bt, const Rows& ct,
                         const CompareOptions& options, const SampleSets& bs, const SampleSets& cs,
                         Comparison c) {
  c.fail_on_regression_pct = options.fail_on_regression_pct;
  std::vector<std::optional<RatioInterval>> time_intervals(pairs.size());
  for (const auto& name : options.metrics) {
    MetricComparison mc;
    mc.metric = find_metric(name);
    std::map<std::string, GeomeanSum> sums;  // per backend
    for (size_t i = 0; i < pairs.size(); ++i) {
      const Pairing& p = pairs[i];
      ComparedRow row =
          judge(bt, p.base, ct, p.candidate, mc.metric, options, bs, cs, time_intervals[i]);
      if (row.verdict != Verdict::not_comparable && std::isfinite(row.ratio) && row.ratio > 0) {
        sums[row.backend].add(row);
        ++c.compared;
      }
      c.regressions += row.regression;
      mc.rows.push_back(std::move(row));
    }
    for (const auto& [backend, sum] : sums) mc.geomeans.push_back(sum.geomean(backend));
    c.metrics.push_back(std::move(mc));
  }
  return c;
}

std::string key(const Row& row, bool with_backend) {
  return row.point_id + "|" + (with_backend ? row.backend + "|" : "") + to_string(row.timing_mode);
}

// Rows grouped by key, the groups in the order their first row appears.
std::vector<std::pair<std::string, Group>> groups(const Rows& t, bool with_backend,
                                                  const std::function<bool(const Row&)>& wanted) {
  std::vector<std::pair<std::string, Group>> out;
  std::map<std::string, size_t> index;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    if (!wanted(t[r])) continue;
    const std::string k = key(t[r], with_backend);
    auto [it, fresh] = index.emplace(k, out.size());
    if (fresh) out.push_back({k, {}});
    out[it->second].second.push_back(r);
  }
  return out;
}

Rows typed(const CsvTable& table, const CompareOptions& options) {
  Rows out{table.path, typed_rows(table)};
  if (options.normalize_by)
    out.rows = normalized_by(out.rows, table.path, *options.normalize_by, options.metrics);
  return out;
}

}  // namespace

Comparison compare_reports(const CsvTable& base_report, const CsvTable& candidate_report,
                           const CompareOptions& options, const SampleSets& base_report_samples,
                           const SampleSets& candidate_report_samples) {
  check_report(base_report, options.metrics);
  check_report(candidate_report, options.metrics);
  const bool normalize = options.normalize_by.has_value();
  const Rows base = typed(base_report, options), candidate = typed(candidate_report, options);
  const SampleSets none;
  const SampleSets& base_samples = normalize ? none : base_report_samples;
  const SampleSets& candidate_samples = normalize ? none : candidate_report_samples;
  auto all = [](const Row&) { return true; };
  std::map<std::string, Group> base_groups;
  for (auto& [k, g] : groups(base, true, all)) base_groups[k] = g;
  std::vector<Pairing> pairs;
  Comparison c;
  for (auto& [k, g] : groups(candidate, true, all)) {
    auto it = base_groups.find(k);
    if (it == base_groups.end()) {
      ++c.only_in_candidate;
      continue;
    }
    pairs.push_back({it->second, g});
  }
  c.base_label = normalize ? "base / " + *options.normalize_by : "base";
  c.candidate_label = normalize ? "new / " + *options.normalize_by : "new";
  c.base_path = base.path;
  c.candidate_path = candidate.path;
  c.base_rows = base.rows.size();
  c.candidate_rows = candidate.rows.size();
  c.joined = pairs.size();
  c.only_in_base = base_groups.size() - pairs.size();
  return compare_pairs(pairs, base, candidate, options, base_samples, candidate_samples,
                       std::move(c));
}

Comparison compare_backends(const CsvTable& report, const CompareOptions& options,
                            const SampleSets& samples) {
  check_report(report, options.metrics);
  const std::string& baseline = options.baseline_backend.value();
  const Rows table = typed(report, {});
  std::map<std::string, Group> base_groups;
  for (auto& [k, g] : groups(table, false, [&](const Row& r) { return r.backend == baseline; }))
    base_groups[k] = g;
  if (base_groups.empty())
    throw InputError(table.path + ": no rows for the baseline backend '" + baseline + "'");
  std::vector<Pairing> pairs;
  for (auto& [k, g] : groups(table, true, [&](const Row& r) { return r.backend != baseline; })) {
    auto it = base_groups.find(key(table[g.front()], false));
    if (it != base_groups.end()) pairs.push_back({it->second, g});
  }
  Comparison c;
  c.base_label = baseline;
  c.candidate_label = "backend";
  c.base_path = c.candidate_path = table.path;
  c.base_rows = c.candidate_rows = table.rows.size();
  c.joined = pairs.size();
  return compare_pairs(pairs, table, table, options, samples, samples, std::move(c));
}

void require_joined(const Comparison& c, const std::string& command) {
  if (c.joined > 0) return;
  if (c.base_path == c.candidate_path)
    throw InputError(command + ": no backend of " + c.candidate_path +
                     " has a row at a point and timing mode of the baseline '" + c.base_label +
                     "': nothing to compare");
  throw InputError(command + ": no (point, backend, timing mode) of " + c.candidate_path +
                   " is in " + c.base_path + ": nothing to compare (another sweep?)");
}

}  // namespace attnbench
