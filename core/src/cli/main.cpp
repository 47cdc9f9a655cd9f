// attnbench command line: list, run, merge, compare, summary, export, plot, calibrate (and worker,
// started by run).
// Exit codes: 0 done; 1 a row ended error, oom, wrong, crashed or timeout, a failure stopped the
// run, or compare found a regression; 2 bad input (config, command line, CSV), and nothing is
// written.
//
// Built twice: `attnbench` without LibTorch (it plans, runs workers, writes and compares reports,
// and starts in milliseconds) and `attnbench-measure` with it (ATTNBENCH_WITH_MEASURE: the worker,
// list, calibrate and in-process runs). attnbench hands those to attnbench-measure by exec.
#include "base/errors.hpp"
#include "base/names.hpp"
#include "cli/commands.hpp"

#include <CLI/CLI.hpp>

#include <boost/dll/runtime_symbol_info.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace attnbench {

std::string git_sha() {
  // The device machine gets a copy of the tree without .git: the caller passes the commit.
  if (const char* env = std::getenv("ATTNBENCH_GIT_SHA"); env && *env) return env;
  return build_git_sha();
}

std::string measure_executable() {
  return (boost::dll::program_location().parent_path() / "attnbench-measure").string();
}

}  // namespace attnbench

int main(int argc, char** argv) {
  using namespace attnbench;
  CLI::App app{
      "attnbench: which attention backend is fastest for your shapes, why, and what it costs"};
  app.require_subcommand(1);

  // --plugin-dir may repeat; each takes one folder. $ATTNBENCH_PLUGIN_PATH adds more.
  const std::string plugin_dir_help =
      "Folder with attnbench_*.so plugins; repeat for more (default: the bundled plugins); "
      "$ATTNBENCH_PLUGIN_PATH (colon-separated) adds folders after these";
  std::vector<std::string> list_plugin_dirs;
  auto* list =
      app.add_subcommand("list", "Show the backend plugins found, and why any failed to load");
  list->add_option("--plugin-dir", list_plugin_dirs, plugin_dir_help)->expected(1)->take_all();

  RunArgs run_args;
  RunOverrides& overrides = run_args.overrides;
  auto* run = app.add_subcommand(
      "run", "Run a YAML sweep and write CSV reports (exit 1 if a row ends error, oom or wrong)");
  run->add_option("config", run_args.config, "Sweep config (YAML)")->required();
  run->add_option("-o,--output", overrides.output,
                  "CSV path (default: the config's output, else results/<config>.csv)");
  run->add_option("--plugin-dir", run_args.plugin_dirs, plugin_dir_help)->expected(1)->take_all();
  run->add_option("--backends", overrides.backends, "Only these backends (overrides the config)")
      ->delimiter(',');
  run->add_option("--passes", overrides.passes, "Only these passes: " + one_of(enum_names<Pass>()))
      ->delimiter(',');
  run->add_option("--timing-modes", overrides.timing_modes,
                  "CUDA timing modes, of cold, batch and graph (overrides the config)")
      ->delimiter(',');
  run->add_option("--points", overrides.points, "Only these point ids (as --dry-run prints them)")
      ->delimiter(',');
  run->add_option("--calibration", run_args.calibration,
                  "Calibration JSON for % of peak (default: results/calibration/<device>.json)");
  run->add_option("--isolation", run_args.isolation,
                  "worker: measure in worker processes that a crash or hang cannot take down "
                  "(default); none: in this process, for gdb and cuda-gdb")
      ->check(CLI::IsMember({"worker", "none"}));
  run->add_option("--repetitions", overrides.repetitions,
                  "Measure every (point, backend) N times, the sweep run through once per "
                  "repetition (default: measurement.repetitions, else 1)")
      ->check(CLI::PositiveNumber);
  run->add_option("--timeout-s", overrides.timeout_s,
                  "Seconds a worker may spend on one (point, backend) before it is killed "
                  "(default: measurement.timeout_s, else 600)")
      ->check(CLI::PositiveNumber);
  run->add_flag(
      "--resume", run_args.resume,
      "Keep the complete rows of an interrupted report of the same sweep; measure the rest");
  run->add_flag("--force", run_args.force, "Overwrite an existing report");
  run->add_flag("--dry-run", run_args.dry_run,
                "Print the expanded points and backends; write nothing");
  run->add_flag("--no-summary", run_args.no_summary, "Do not print the summary table");
  run->add_option(
      "--shard", overrides.shard,
      "Run part K of N (K/N) of the sweep's (point, backend)s, split by estimated cost; "
      "`attnbench merge` joins the parts (default output <stem>.shard-K-of-N.csv)");
  run->add_option("--devices", run_args.devices,
                  "GPUs to measure on at once, one worker each, from one queue into one report: "
                  "0,1,... or all");
  run->add_flag("--check", run_args.check,
                "Exit 1 when a row misses a prediction of the config's expect: block");
  run->add_flag("--trace", run_args.trace,
                "Write a Chrome trace (Perfetto, chrome://tracing) of a few calls per (point, "
                "backend) to <output stem>.traces/");

  CompareArgs compare_args;
  auto* compare =
      app.add_subcommand("compare", "Compare two reports, or backends inside one report");
  compare
      ->add_option("reports", compare_args.files, "base.csv new.csv, or one report with --baseline")
      ->required();
  compare->add_option("--baseline", compare_args.baseline,
                      "Backend to compare the others against (one report)");
  compare
      ->add_option("--metric", compare_args.metrics, "Columns to compare (default time_ms_median)")
      ->delimiter(',');
  compare->add_option("--output-format", compare_args.format, "text, markdown or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  compare->add_flag("--markdown", compare_args.markdown,
                    "Markdown tables (--output-format markdown)");
  compare
      ->add_option("--fail-on-regression", compare_args.fail_pct,
                   "Exit 1 if a row is `worse` (its whole interval beyond the threshold; any "
                   "change for counts) and by more than PCT percent")
      ->check(CLI::NonNegativeNumber);
  compare
      ->add_option("--threshold", compare_args.threshold_pct,
                   "Smallest change in percent that counts for time metrics (default 5; host time "
                   "35): inside it `same`, across it `unsure`")
      ->check(CLI::NonNegativeNumber);

  compare->add_option("--normalize-by", compare_args.normalize_by,
                      "Two reports: divide each row's times by this backend's at the same point, "
                      "mode and repetition of its own report first, so drift that hits a whole "
                      "run cancels");

  std::vector<std::string> worker_plugin_dirs;
  int worker_fd = 3;
  auto* worker = app.add_subcommand("worker", "");  // internal: started by `run`; hidden from help
  worker->add_option("--plugin-dir", worker_plugin_dirs)->expected(1)->take_all();
  worker->add_option("--protocol-fd", worker_fd);

  std::string export_file, export_format, export_output;
  auto* exporter = app.add_subcommand(
      "export", "Write a report in another format (gbench: Google Benchmark JSON)");
  exporter->add_option("report", export_file, "Report CSV")->required();
  exporter->add_option("--format", export_format, "gbench")
      ->required()
      ->check(CLI::IsMember({"gbench"}));
  exporter->add_option("-o,--output", export_output, "Output file (default: standard output)");

  MergeArgs merge_args;
  auto* merge = app.add_subcommand(
      "merge", "Join shard reports (run --shard K/N) into one: main, kernel and sample CSVs");
  merge->add_option("reports", merge_args.files, "The shards' reports (CSV)")->required();
  merge->add_option("-o,--output", merge_args.output, "The merged report (CSV)")->required();
  merge->add_option("--config", merge_args.config,
                    "The sweep's config, to name every missing (point, backend) (default: the "
                    "one the rows name, if it is there)");
  merge->add_flag("--force", merge_args.force, "Overwrite an existing output");

  PlotArgs plot_args;
  auto* plot = app.add_subcommand(
      "plot",
      "Draw a report (TFLOP/s and time against seq_len, kernels and copies per backend) "
      "or a comparison (ratios with intervals) with matplotlib");
  plot->add_option("reports", plot_args.files, "report.csv, or base.csv new.csv")->required();
  plot->add_option("--baseline", plot_args.baseline, "Plot one report's backends against this one");
  plot->add_option("-o,--output", plot_args.output,
                   "Folder for the pictures (default: <report stem>.plots beside it)");
  plot->add_option("--format", plot_args.format, "png (default) or svg")
      ->check(CLI::IsMember({"png", "svg"}));
  plot->add_option("--timing-mode", plot_args.timing_mode,
                   "CUDA timing mode to draw (default: cold, else the first in the report)")
      ->check(CLI::IsMember({"cold", "batch", "graph", "wall"}));

  std::string summary_file;
  auto* summary = app.add_subcommand("summary", "Print the summary table of a report");
  summary->add_option("report", summary_file, "Report CSV")->required();

  auto* columns = app.add_subcommand(
      "columns", "Print the columns of every report and the measurement keys (docs/columns.md)");

  std::string calibration_output;
  auto* calibrate = app.add_subcommand(
      "calibrate", "Measure the GPU's bf16 matmul and copy ceilings and store them");
  calibrate->add_option("-o,--output", calibration_output,
                        "JSON path (default: results/calibration/<device>.json)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

#ifndef ATTNBENCH_WITH_MEASURE
  if (*list || *worker || *calibrate || (*run && run_args.isolation == "none")) {
    const std::string exe =
        measure_executable();  // these need LibTorch: it takes this process's place
    execv(exe.c_str(), argv);
    std::cerr << "attnbench: cannot run " << exe << ": " << std::strerror(errno) << '\n';
    return 1;
  }
#endif

  try {
#ifdef ATTNBENCH_WITH_MEASURE
    if (*list) return cmd_list(list_plugin_dirs);
    if (*worker) return cmd_worker(worker_plugin_dirs, worker_fd);
    if (*calibrate) return cmd_calibrate(calibration_output);
#endif
    if (*run) return cmd_run(run_args);
    if (*compare) return cmd_compare(compare_args);
    if (*exporter) return cmd_export(export_file, export_format, export_output);
    if (*summary) return cmd_summary(summary_file);
    if (*plot) return cmd_plot(plot_args);
    if (*merge) return cmd_merge(merge_args);
    if (*columns) return cmd_columns();
  } catch (const InputError& e) {
    std::cerr << "attnbench: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "attnbench: error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
