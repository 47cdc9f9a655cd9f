// attnbench's subcommands, one file each; main.cpp parses the command line into these arguments and
// catches errors once: InputError -> exit 2, anything else -> exit 1.
#pragma once

#include "cli/run_plan.hpp"

#include <string>
#include <vector>

namespace attnbench {

struct RunArgs {
  std::string config;
  std::vector<std::string> plugin_dirs;  // --plugin-dir, in order
  std::string calibration;
  RunOverrides overrides;
  std::string isolation = "worker";  // or "none": measure in this process
  bool resume = false;               // keep what the output has, measure the rest
  bool force = false;                // overwrite an existing output
  bool dry_run = false;
  bool no_summary = false;
  bool check = false;   // exit 1 when a row misses a prediction of the config's `expect:`
  bool trace = false;   // write a Chrome trace per (point, backend) beside the report
  std::string devices;  // --devices 0,1 | all: one worker per GPU, one queue, one report
};

struct CompareArgs {
  std::vector<std::string> files;
  std::string baseline;
  std::vector<std::string> metrics;
  bool markdown = false;        // the same as format "markdown"
  std::string format = "text";  // text | markdown | json
  double fail_pct = -1;         // -1: not given
  double threshold_pct = -1;    // -1: each metric's own
  std::string normalize_by;     // two reports: every row over this backend's in the same report
};

struct PlotArgs {
  std::vector<std::string> files;  // one report, or base and new
  std::string baseline;            // one report: compare its backends against this one
  std::string output;              // folder; default <stem>.plots beside the first report
  std::string format = "png";      // png | svg
  std::string timing_mode;         // which CUDA mode to draw; default cold, else the first present
};

struct MergeArgs {
  std::vector<std::string> files;  // the shards' main CSVs
  std::string output;
  std::string config;  // the sweep's config: names every missing (point, backend)
  bool force = false;
};

int cmd_list(const std::vector<std::string>& plugin_dirs);
// 0 when every row ran; 1 when a row ended error, oom, wrong, crashed or timeout (every row is
// still written).
int cmd_run(const RunArgs& args);
// 0 when the merged report is complete; 1 when it has gaps (still written); 2 bad input.
int cmd_merge(const MergeArgs& args);
// 0 when every picture was drawn; 1 when Python, matplotlib or plots.py failed.
int cmd_plot(const PlotArgs& args);
// Measures what `run` sends it (isolate/protocol.hpp) and answers on `protocol_fd`.
int cmd_worker(const std::vector<std::string>& plugin_dirs, int protocol_fd);
// 0, or 1 when --fail-on-regression found a regression.
int cmd_compare(const CompareArgs& args);
int cmd_summary(const std::string& report);
// A report in another format: "gbench" (Google Benchmark JSON) to `output`, or stdout when empty.
int cmd_export(const std::string& report, const std::string& format, const std::string& output);
int cmd_calibrate(const std::string& output);
int cmd_columns();  // docs/columns.md, from the field tables

// attnbench-measure, beside this executable: the worker and every command that needs LibTorch.
std::string measure_executable();

// The commit the binary was built from (or $ATTNBENCH_GIT_SHA, for trees copied without .git).
std::string git_sha();
std::string build_git_sha();  // generated at build time by cmake/git_sha.cmake

}  // namespace attnbench
