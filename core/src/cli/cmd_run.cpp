#include "analysis/summary.hpp"
#include "base/errors.hpp"
#include "cli/commands.hpp"
#include "config/measurement_section.hpp"
#include "records/expectations.hpp"
#include "run/run_sweep.hpp"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>

namespace attnbench {

namespace {

// What the command line says beyond the run request: where to measure and what to print.
struct RunArgs {
  RunRequest request;
  std::string isolation = "worker";  // or "none": measure in this process
  bool no_summary = false;
  bool check = false;  // exit 1 when a row misses a prediction of the config's `expect:`
};

void print_dry_run(const RunPlan& plan) {
  std::cout << plan.points.size() << " points x " << plan.backends.size()
            << " backends = " << plan.points.size() * plan.backends.size() << " measurements, "
            << plan.config.measurement.timing_modes.size() << " timing mode(s) on CUDA points\n";
  if (plan.shard) {
    std::cout << "shard " << plan.shard->text() << ": " << plan.tasks.size() << " of them:\n";
    for (const Task& t : plan.tasks)
      std::cout << "  " << plan.points[t.point].id << " " << t.backend << '\n';
  }
  for (const auto& p : plan.points) std::cout << "  " << p.id << '\n';
  std::cout << "backends:";
  for (const auto& b : plan.backends) std::cout << ' ' << b;
  std::cout << "\noutput: " << plan.output << " (not written: dry run)\n";
  if (!plan.config.layers.empty()) {  // what tools/layer_mix.py sums the rows by
    std::cout << "layers:";
    for (const auto& [kind, count] : plan.config.layers) std::cout << ' ' << kind << ' ' << count;
    std::cout << '\n';
  }
}

// 0 when every row ran; 1 when a row ended error, oom, wrong, crashed or timeout (every row is
// still written).
int cmd_run(RunArgs& args) {
  RunRequest& request = args.request;
  if (!request.devices.empty() && args.isolation == "none")
    throw InputError("--devices needs workers (not --isolation none)");
  request.git_sha = git_sha();
  const bool in_process = args.isolation == "none";
  request.measurer = [in_process](const BackendSources& sources,
                                  const std::string& device) -> std::unique_ptr<Measurer> {
#ifdef ATTNBENCH_WITH_MEASURE
    if (in_process) return in_process_measurer(sources);
#else
    (void)in_process;
#endif
    return isolated_measurer(measure_executable(), sources,
                             device.empty() ? std::nullopt : std::optional(device));
  };
  const RunOutcome outcome = run_sweep(request);
  if (!outcome.rows_path) {
    print_dry_run(outcome.plan);
    return 0;
  }
  std::cerr << "wrote " << *outcome.rows_path << " and " << *outcome.kernels_path << '\n';
  // The exit code judges the whole report, rows kept by --resume included.
  const std::vector<Row>& report = outcome.report;
  if (!args.no_summary) print_summary(report, std::cout);
  size_t failed = 0, missed = 0;
  for (const Row& row : report) {
    failed += is_failure(row.status);
    missed += is_missed(row.expectation);
  }
  int exit_code = 0;
  if (failed > 0) {
    std::cerr << "attnbench: " << failed
              << " row(s) ended error, oom, wrong, crashed or timeout (see their reason)\n";
    exit_code = 1;
  }
  if (missed > 0) {
    std::cerr << "attnbench: " << missed
              << " row(s) missed a prediction (their expectation column says which)"
              << (args.check ? "" : "; --check makes that exit 1") << '\n';
    if (args.check) exit_code = 1;
  }
  return exit_code;
}

}  // namespace

Subcommand add_run(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  RunRequest& r = a->request;
  RunOverrides& overrides = r.overrides;
  auto* cmd = app.add_subcommand(
      "run", "Run a YAML sweep and write CSV reports (exit 1 if a row ends error, oom or wrong)");
  cmd->add_option("config", r.config, "Sweep config (YAML)")->required();
  cmd->add_option("-o,--output", overrides.output,
                  "CSV path (default: the config's output, else results/<config>.csv)")
      ->check(CLI::Validator(
          [](std::string& path) {
            return path.empty() ? std::string("the output path is empty") : std::string();
          },
          "PATH"));
  cmd->add_option("--plugin-dir", r.plugin_dirs, kPluginDirHelp)->expected(1)->take_all();
  cmd->add_option("--backends", overrides.backends, "Only these backends (overrides the config)")
      ->delimiter(',');
  cmd->add_option("--passes", overrides.passes, "Only these passes: " + one_of(enum_names<Pass>()))
      ->delimiter(',');
  cmd->add_option("--timing-modes", overrides.timing_modes,
                  "CUDA timing modes, of cold, batch and graph (overrides the config)")
      ->delimiter(',');
  cmd->add_option("--points", overrides.points, "Only these point ids (as --dry-run prints them)")
      ->delimiter(',');
  cmd->add_option("--calibration", r.calibration,
                  "Calibration JSON for % of peak (default: results/calibration/<device>.json)");
  cmd->add_option("--isolation", a->isolation,
                  "worker: measure in worker processes that a crash or hang cannot take down "
                  "(default); none: in this process, for gdb and cuda-gdb")
      ->check(CLI::IsMember({"worker", "none"}));
  // A whole number of at least 1: an empty or a 0 one is refused, never read as "not given".
  const CLI::Validator at_least_one(
      [](std::string& n) {
        return !n.empty() && n.find_first_not_of("0123456789") == std::string::npos &&
                       n.find_first_not_of('0') != std::string::npos && n.size() <= 9
                   ? std::string()
                   : "a whole number of at least 1, not '" + n + "'";
      },
      "N >= 1");
  // An empty value is refused, never read as "not given" (--devices '' measured on no GPU list).
  const CLI::Validator given(
      [](std::string& s) { return s.empty() ? std::string("a value, not ''") : std::string(); },
      "");
  cmd->add_option("--tp", overrides.tp,
                  "Serve every block at this tensor-parallel degree: heads / N query heads a GPU, "
                  "kv heads divided or replicated (overrides each block's tp:)")
      ->check(at_least_one);
  cmd->add_option("--repetitions", overrides.repetitions,
                  "Measure every (point, backend) N times, the sweep run through once per "
                  "repetition (default: measurement.repetitions, else 1)")
      ->check(at_least_one);
  cmd->add_option("--power", overrides.power,
                  "sustained (samples back to back) or burst (each sample at the rested SM "
                  "clock), overrides measurement.power")
      ->check(CLI::IsMember(enum_names<PowerMode>()));
  cmd->add_option("--timeout-s", overrides.timeout_s,
                  "Seconds a worker may spend on one (point, backend) before it is killed "
                  "(default: measurement.timeout_s, else 600)")
      ->check(CLI::Validator(
          [](std::string& s) {
            char* end = nullptr;
            const double v = std::strtod(s.c_str(), &end);
            return !s.empty() && *end == '\0' && v > 0 && v <= kMaxTimeoutS
                       ? std::string()
                       : "seconds above 0, at most " + std::to_string(int(kMaxTimeoutS)) +
                             " (a week), not '" + s + "'";
          },
          "SECONDS"));
  auto* resume = cmd->add_flag(
      "--resume", r.resume,
      "Keep the complete rows of an interrupted report of the same sweep; measure the rest");
  // --resume keeps a report, --force replaces it: one or the other, never both.
  cmd->add_flag("--force", r.force, "Overwrite an existing report")->excludes(resume);
  cmd->add_flag("--dry-run", r.dry_run, "Print the expanded points and backends; write nothing");
  cmd->add_flag("--no-summary", a->no_summary, "Do not print the summary table");
  cmd->add_option(
         "--shard", overrides.shard,
         "Run part K of N (K/N) of the sweep's (point, backend)s, split by estimated cost; "
         "`attnbench merge` joins the parts (default output <stem>.shard-K-of-N.csv)")
      ->check(given);
  cmd->add_option("--devices", r.devices,
                  "GPUs to measure on at once, one worker each, from one queue into one report: "
                  "0,1,... or all")
      ->check(given);
  cmd->add_flag("--check", a->check,
                "Exit 1 when a row misses a prediction of the config's expect: block");
  cmd->add_flag("--trace", r.trace,
                "Write a Chrome trace (Perfetto, chrome://tracing) of a few calls per (point, "
                "backend) to <output stem>.traces/");
  return {cmd, [a] { return cmd_run(*a); }, [a] { return a->isolation == "none"; }};
}

}  // namespace attnbench
