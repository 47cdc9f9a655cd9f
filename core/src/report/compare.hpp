// Compares CSV reports: run against run (two files) or backend against backend (one file).
// compare_* compute a Comparison; print_comparison only formats it.
#pragma once

#include "base/enums.hpp"
#include "report/csv.hpp"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace attnbench {

// A column compare knows how to judge: which direction is better and where its noise comes from.
struct Metric {
  std::string name;
  bool higher_is_better = false;
  std::string noise_column;            // a relative standard deviation per row (time_rel_noise), or
  std::string p10_column, p90_column;  // the spread of its quantiles; all empty: deterministic
  bool deterministic() const { return noise_column.empty() && p10_column.empty(); }
};

const std::vector<Metric>& metric_table();
const Metric& find_metric(const std::string& name);  // throws InputError listing the known ones

struct CompareOptions {
  std::vector<std::string> metrics{"time_ms_median"};
  std::optional<std::string> baseline_backend;  // one-file mode
  std::optional<double> fail_on_regression_pct;
  double min_band = 0.01;  // noisy metrics: differences under 1% are never called changes
};

struct ComparedRow {
  std::string point_id, backend,
      timing_mode;  // backend: the candidate's (one file: not the baseline)
  std::string base_status, candidate_status;
  std::optional<double> base, candidate;  // the metric's values, when measured
  Verdict verdict = Verdict::not_comparable;
  double ratio = 1;  // candidate / base, when comparable
  double band =
      0;  // relative change inside which a noisy metric is "within noise"; 0: deterministic
  bool regression = false;  // worse, beyond the band, and by more than fail_on_regression_pct
  std::string flags;        // the two rows' flags, each once (clock_throttled, noise_target_missed)
};

struct Geomean {
  std::string backend;
  double ratio = 1;  // geometric mean of candidate / base over the comparable rows
  int rows = 0;
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

// Two reports: rows joined on (point_id, backend, timing_mode).
Comparison compare_reports(const CsvTable& base, const CsvTable& candidate,
                           const CompareOptions& options);
// One report: every backend against options.baseline_backend at the same (point_id, timing_mode).
Comparison compare_backends(const CsvTable& report, const CompareOptions& options);

enum class CompareFormat { text, markdown, json };

// The renderer (compare_print.cpp): text or markdown tables, or one JSON document, of a
// Comparison; it computes nothing.
void print_comparison(const Comparison& comparison, std::ostream& out, CompareFormat format);

// Throws InputError unless the table carries this attnbench's schema version and the needed
// columns.
void check_report(const CsvTable& table, const std::vector<std::string>& metrics);

}  // namespace attnbench
