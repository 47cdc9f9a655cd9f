// Compares CSV reports: run against run (two files) or backend against backend (one file).
#pragma once

#include "csv.hpp"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace attnbench {

struct CompareOptions {
  std::vector<std::string> metrics{"time_ms_median"};
  std::optional<std::string> baseline_backend;  // one-file mode
  bool markdown = false;
  std::optional<double> fail_on_regression_pct;
  double min_band = 0.01;  // differences under 1% are never called changes
};

struct CompareResult {
  int compared = 0;
  int regressions = 0;  // worse by more than fail_on_regression_pct and beyond the noise band
};

// Two reports: rows joined on (point_id, backend, timing_mode).
CompareResult compare_reports(const CsvTable& base, const CsvTable& candidate, const CompareOptions& options,
                              std::ostream& out);
// One report: every backend against options.baseline_backend at the same (point_id, timing_mode).
CompareResult compare_backends(const CsvTable& report, const CompareOptions& options, std::ostream& out);

// Throws InputError unless the table carries this attnbench's schema version and the needed columns.
void check_report(const CsvTable& table, const std::vector<std::string>& metrics);

}  // namespace attnbench
