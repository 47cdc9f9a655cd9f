// The run stage as one call: a sweep file and the command line's say over it in, a report out.
// It starts the workers, plans the sweep, takes up an interrupted report (--resume), measures what
// is left into the report and judges the predictions; cli/cmd_run.cpp parses and prints.
#pragma once

#include "isolate/measurer.hpp"
#include "records/row.hpp"
#include "run/run_plan.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnbench {

// Makes the measurer of `sources`: on every GPU the process sees (device "") or on that one only.
using MeasurerFactory =
    std::function<std::unique_ptr<Measurer>(const BackendSources& sources, const std::string& device)>;

struct RunRequest {
  std::string config;
  std::vector<std::string> plugin_dirs;  // --plugin-dir, in order
  std::string calibration;               // "": results/calibration/<device>.json if there
  RunOverrides overrides;
  bool resume = false;   // keep what the output has, measure the rest
  bool force = false;    // overwrite an existing output
  bool dry_run = false;  // plan only: nothing measured or written
  bool trace = false;    // a Chrome trace per (point, backend) beside the report
  std::string devices;   // "0,1" or "all": one measurer per GPU, one queue, one report
  std::string git_sha;   // the commit the report is written by
  MeasurerFactory measurer;
};

struct RunOutcome {
  RunPlan plan;
  // Measured (not a dry run): the files written and the whole report, kept rows included.
  std::optional<std::string> rows_path, kernels_path;
  std::vector<Row> report;
};

// Throws InputError or ConfigError (located) for what the run cannot start with, before anything
// is written; rows measured before a later failure stay in the report.
RunOutcome run_sweep(const RunRequest& request);

// --devices "0,2" or "all" (every GPU the host has), each a GPU the machine has.
std::vector<std::string> device_list(const std::string& text, const HostInfo& host);

}  // namespace attnbench
