// Compares CSV reports: run against run (two files) or backend against backend (one file).
// compare_* compute a Comparison; print_comparison only formats it.
#pragma once

#include "base/enums.hpp"
#include "write/csv.hpp"

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace attnbench {

// A column compare knows how to judge: which direction is better, where its noise comes from and
// how large a change must be to count.
struct Metric {
  std::string name;
  bool higher_is_better = false;
  std::string noise_column;            // a relative standard deviation per row (time_rel_noise), or
  std::string p10_column, p90_column;  // the spread of its quantiles; all empty: deterministic
  // Changes smaller than this are `same` (A/A on the H200: GPU medians within ~1-4.5% of each
  // other between identical runs, host time per call 15-32%). 0 for counts: any change counts.
  double threshold = 0;
  bool from_time_samples = false;  // a function of the median time: judged on the raw samples
  bool host_time = false;          // the host's time: the two sides' hosts are compared too
  bool deterministic() const { return noise_column.empty() && p10_column.empty(); }
};

// The samples of a report (<report>.samples.csv), by "point_id|backend|timing_mode".
using SampleSets = std::map<std::string, std::vector<double>>;
std::string sample_key(const std::string& point, const std::string& backend,
                       const std::string& mode);
// Empty when the report has no samples file. Throws InputError, located, on a time that is not a
// positive finite number.
SampleSets read_samples(const std::string& report_csv);
// Throws InputError when `samples` cannot be the samples of `report`'s rows (a stale side file).
void check_samples(const CsvTable& report, const SampleSets& samples);

const std::vector<Metric>& metric_table();
const Metric& find_metric(const std::string& name);  // throws InputError listing the known ones

struct CompareOptions {
  std::vector<std::string> metrics{"time_ms_median"};
  std::optional<std::string> baseline_backend;  // one-file mode
  std::optional<double> fail_on_regression_pct;
  std::optional<double> threshold_pct;  // overrides every noisy metric's threshold
  double min_band = 0.01;               // rows judged on their noise columns: at least 1% of noise
  // Two reports: each row's noisy metrics divided by this backend's at the same point, mode and
  // repetition of the same report before comparing, so drift that hits every backend of a run alike
  // cancels. Judged on the rows' noise and the repetitions' spread (raw samples are not used).
  std::optional<std::string> normalize_by;
  // The time metrics of each row scaled to the base's SM clock (sm_clock_mhz_median; times by
  // clock / base clock, rates by its inverse): what the change would be at one clock. Without it a
  // better or worse between rows whose clocks are over kClocksApart apart is `unsure`.
  bool normalize_clock = false;
};

// Two rows' SM clocks further apart than this make a time verdict between them `unsure`: the power
// state, not the code, may have made the change (H200: 1965 MHz rested, 1515-1635 under a sweep).
inline constexpr double kClocksApart = 0.03;

enum class IntervalBasis { exact, repetitions, samples, noise };

// Why an `unsure` row could not be called, for the summary that counts them: single runs (drift
// unknown), a missed noise target, SM clocks too far apart, or --normalize-clock without a clock.
enum class Unsure { no, single_runs, noise_target, clocks_apart, no_clock };
std::string to_string(IntervalBasis basis);

struct ComparedRow {
  std::string point_id, backend,
      timing_mode;  // backend: the candidate's (one file: not the baseline)
  std::string base_status, candidate_status;
  // The metric's values, when measured; over repetitions their geometric mean when they decide
  // the interval, else their median.
  std::optional<double> base, candidate;
  Verdict verdict = Verdict::not_comparable;
  double ratio = 1;  // candidate / base, when comparable
  // Where the true ratio lies (95%), from the first that applies: the repetitions (a t-interval of
  // the ratio of their geometric means), the raw samples (a bootstrap interval of the ratio of
  // medians), the rows' noise (ratio x / (1 + band), band their relative noise added, at least
  // min_band); [ratio, ratio] for deterministic metrics.
  double ci_low = 1, ci_high = 1;
  IntervalBasis interval_from = IntervalBasis::exact;
  double band = 0;                                      // when judged on the noise columns
  int base_repetitions = 1, candidate_repetitions = 1;  // rows joined per side (run --repetitions)
  double threshold = 0;     // the metric's (or --threshold's), as a fraction
  bool regression = false;  // worse, and by more than fail_on_regression_pct
  std::string flags;        // the two rows' flags, each once (clock_throttled, noise_target_missed)
  // `unsure` without repetitions: why the data cannot tell, and the repetitions per side that
  // would (0: none would, the change is inside the threshold).
  Unsure unsure = Unsure::no;
  std::string why_unsure;  // `unsure` in words, with the numbers
  int repetitions_needed = 0;
};

struct Geomean {
  std::string backend;
  double ratio = 1;  // geometric mean of candidate / base over the comparable rows
  int rows = 0;
  double ci_low = 1, ci_high = 1;  // 95%, from the rows' intervals
};

struct MetricComparison {
  Metric metric;
  std::vector<ComparedRow> rows;
  std::vector<Geomean> geomeans;  // per backend, sorted by name
};

struct Comparison {
  std::string base_label, candidate_label;  // "base"/"new", or the baseline backend and "backend"
  std::string base_path, candidate_path;
  size_t base_rows = 0, candidate_rows = 0, joined = 0, only_in_base = 0, only_in_candidate = 0;
  std::optional<double> fail_on_regression_pct;
  std::vector<MetricComparison> metrics;
  int compared = 0;     // comparable (row, metric) pairs
  int regressions = 0;  // rows marked regression, over all metrics
};

// Two reports: rows joined on (point_id, backend, timing_mode). The samples, where given, decide
// the time metrics' intervals.
Comparison compare_reports(const CsvTable& base, const CsvTable& candidate,
                           const CompareOptions& options, const SampleSets& base_samples = {},
                           const SampleSets& candidate_samples = {});
// One report: every backend against options.baseline_backend at the same (point_id, timing_mode).
Comparison compare_backends(const CsvTable& report, const CompareOptions& options,
                            const SampleSets& samples = {});

// Throws InputError when nothing was joined: reports (or backends) that share no measurement are
// not "no regression", and there is nothing to draw. `command` starts the message.
void require_joined(const Comparison& comparison, const std::string& command);

enum class CompareFormat { text, markdown, json };

// The renderer (compare_print.cpp): text or markdown tables, or one JSON document, of a
// Comparison; it computes nothing.
void print_comparison(const Comparison& comparison, std::ostream& out, CompareFormat format);

// Throws InputError unless the table carries this attnbench's schema version and the needed
// columns, and each backend's rows one build of its code.
void check_report(const CsvTable& table, const std::vector<std::string>& metrics);
// Throws InputError naming two rows when a backend's rows across `tables` (one report, or the
// shards merge joins) carry two builds of its code (column backend_build; older reports have none).
void require_one_build_per_backend(const std::vector<const CsvTable*>& tables);

}  // namespace attnbench
