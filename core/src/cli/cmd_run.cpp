#include "analysis/summary.hpp"
#include "base/names.hpp"
#include "base/time.hpp"
#include "cli/commands.hpp"
#include "isolate/measurer.hpp"
#include "records/expectations.hpp"
#include "run/calibration.hpp"
#include "run/judging_writer.hpp"
#include "run/progress.hpp"
#include "run/rejudge.hpp"
#include "run/resume.hpp"
#include "run/scheduler.hpp"
#include "write/csv.hpp"
#include "write/output_lock.hpp"
#include "write/report_writer.hpp"
#include "write/schema.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <unistd.h>

namespace attnbench {

namespace {

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
}

RunOptions run_options(const RunPlan& plan, const HostInfo& host, const std::string& calibration,
                       bool trace) {
  RunOptions options;
  options.measurement = plan.config.measurement;
  options.measurement.trace = trace;
  options.tolerance = plan.config.tolerance;
  options.seed = plan.config.seed;
  options.info = {host.device_name,  host.torch_version, git_sha(),
                  utc_now_iso8601(), plan.config.file,   plan.fingerprint};
  options.info.host_name = machine_name();
  options.info.host_cpus = sysconf(_SC_NPROCESSORS_ONLN);
  options.peak_tflops = plan.config.peak_tflops;
  options.peak_tflops_fp8 = plan.config.peak_tflops_fp8;
  if (host.cuda_available) {
    const std::string path =
        calibration.empty() ? default_calibration_path(host.device_name) : calibration;
    if (auto c = load_calibration(path)) {
      if (!options.peak_tflops) options.peak_tflops = c->bf16_matmul_tflops;
      if (!options.peak_tflops_fp8) options.peak_tflops_fp8 = c->fp8_matmul_tflops;
      options.bandwidth_gbps = c->bandwidth_gbps();
    } else if (!calibration.empty())
      throw InputError(path + ": cannot read the calibration file");
  }
  return options;
}

// The plugin folders, and the config's backends of other kinds (those --backends keeps), each
// checked available (a kind this attnbench cannot run refuses the config at its entry) and
// prepared (a source compiled) before any worker starts.
BackendSources backend_sources(const RunArgs& args, const SweepConfig& config) {
  const auto& only = args.overrides.backends;
  std::vector<BackendSpec> specs;
  for (const BackendSpec& spec : config.backends)
    if (only.empty() || std::find(only.begin(), only.end(), spec.name) != only.end())
      specs.push_back(spec);
  return prepare_backends(args.plugin_dirs, specs, config.file);
}

std::unique_ptr<Measurer> measurer(const RunArgs& args, const BackendSources& sources) {
#ifdef ATTNBENCH_WITH_MEASURE
  if (args.isolation == "none") return in_process_measurer(sources);
#endif
  return isolated_measurer(measure_executable(), sources);
}

// What a worker could not load that the run cannot go on without: two backends with one name, a
// Python module without the function the config names (located at the config's entry).
void refuse_bad_backends(const std::vector<LoadFailure>& failures, const SweepConfig& config) {
  for (const auto& f : failures) {
    if (f.config_error || f.duplicate)
      for (const BackendSpec& spec : config.backends)
        if (spec.kind == f.kind && spec.target == f.file)
          throw ConfigError(config.file, spec.line, spec.column, "backends", f.reason);
    if (f.duplicate) throw InputError(f.reason);  // which of the two would be measured?
    std::cerr << "attnbench: " << failure_subject(f) << " not loaded: " << f.reason << '\n';
  }
}

// --devices "0,2" or "all" (every GPU the first worker sees), each a GPU the machine has.
std::vector<std::string> device_list(const std::string& text, const HostInfo& host) {
  std::vector<std::string> out;
  if (text == "all") {
    if (host.cuda_device_count < 1) throw InputError("--devices all: this machine has no GPU");
    for (int i = 0; i < host.cuda_device_count; ++i) out.push_back(std::to_string(i));
    return out;
  }
  for (const std::string& item : split(text, ',')) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
      throw InputError("--devices: expected GPU numbers like 0,1 or 'all', got '" + text + "'");
    if (std::find(out.begin(), out.end(), item) != out.end())
      throw InputError("--devices: GPU " + item + " is listed twice");
    // A worker given a GPU that is not there would see none and call every CUDA point
    // unsupported. Without GPUs at all, the workers run CPU points.
    if (host.cuda_device_count > 0 && std::stoi(item) >= host.cuda_device_count)
      throw InputError("--devices: GPU " + item + " does not exist (this machine has " +
                       std::to_string(host.cuda_device_count) + ")");
    out.push_back(item);
  }
  return out;
}

// 0 when every row ran; 1 when a row ended error, oom, wrong, crashed or timeout (every row is
// still written).
int cmd_run(const RunArgs& args) {
  Sweep sweep = load_sweep(args.config);
  const SweepConfig& config = sweep.config;
  const std::string output = output_path(config, args.overrides);
  std::optional<OutputLock> lock;  // held until the run ends, however it ends
  if (!args.dry_run) lock.emplace(output);
  // A report and its side files are one unit: any of them there is the report there.
  if (!args.dry_run && !args.resume && !args.force)
    for (const std::string& file :
         {output, sibling(output, side::kernels), sibling(output, side::samples)})
      if (std::filesystem::exists(file))
        throw InputError(file +
                         " exists: --resume measures only what the report lacks and appends, "
                         "--force overwrites the report and its side files");

  // Workers start before this process could touch CUDA; their hello says what the host has.
  const BackendSources sources = backend_sources(args, config);
  std::vector<std::unique_ptr<Measurer>> measurers;
  measurers.push_back(measurer(args, sources));
  const Measurer& first = *measurers.front();
  refuse_bad_backends(first.failures(), config);
  if (first.backend_names().empty())
    throw InputError("no backend plugins found in " +
                     folder_list(plugin_search_path(args.plugin_dirs)));
  const RunPlan plan = plan_run(std::move(sweep), args.overrides, first.backend_names(),
                                first.host().cuda_available);
  if (args.dry_run) {
    print_dry_run(plan);
    return 0;
  }
  std::vector<std::string> devices;
  if (!args.devices.empty()) {
    if (args.isolation == "none")
      throw InputError("--devices needs workers (not --isolation none)");
    devices = device_list(args.devices, first.host());
    measurers.clear();  // one worker per GPU, each seeing only its own
    for (const auto& d : devices)
      measurers.push_back(isolated_measurer(measure_executable(), sources, d));
  }

  RunOptions options = run_options(plan, measurers.front()->host(), args.calibration, args.trace);
  if (plan.shard) options.info.shard = plan.shard->text();
  std::set<RecordKey> done;
  bool append = false;
  if (args.resume && std::filesystem::exists(output)) {
    const Resumed resumed =
        resume_report(read_report_texts(output), output, plan.fingerprint, options.info.device_name,
                      options.info.torch_version, plan.config.measurement.timing_modes.size());
    write_report_texts(output, resumed.kept);
    done = resumed.done;
    append = !resumed.kept.rows.empty();  // else (0 bytes, a torn header) it starts over
    std::cerr << "attnbench: resuming " << output << ": " << done.size()
              << " (point, backend) done, measuring the rest\n";
  }
  if (!append) std::filesystem::remove_all(sibling(output, side::traces));  // none of another run
  ReportWriter writer(output, plan.config.measurement.keep_samples, append);
  for (auto& m : measurers) m->setup(options);

  const int repetitions = plan.config.measurement.repetitions;
  std::vector<Job> jobs;
  std::map<std::pair<int, std::string>, std::set<std::string>> expected;
  for (int rep = 0; rep < repetitions; ++rep)
    for (const Task& task : plan.tasks) {
      const std::string& point_id = plan.points[task.point].id;
      if (done.count({point_id, task.backend, rep})) continue;
      jobs.push_back({rep, &task});
      expected[{rep, point_id}].insert(task.backend);
    }
  Progress progress(plan.tasks.size() * static_cast<size_t>(repetitions), std::cerr,
                    stderr_is_terminal());
  for (size_t i = jobs.size(); i < plan.tasks.size() * static_cast<size_t>(repetitions); ++i)
    progress.end();  // resumed
  JudgingWriter judged(writer, plan.expect, std::move(expected));

  run_jobs(jobs, plan, measurers, devices, progress, judged);
  progress.finish();
  if (!done.empty())  // the kept rows' and the new rows' predictions, judged as one run would
    replace_file_text(writer.rows_path(),
                      rejudged_report(complete_records(read_report_texts(output).rows), output,
                                      plan.expect));
  std::cerr << "wrote " << writer.rows_path() << " and " << writer.kernels_path() << '\n';
  // The exit code judges the whole report, rows kept by --resume included.
  const std::vector<Row> report = typed_rows(read_csv(writer.rows_path()));
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
  RunOverrides& overrides = a->overrides;
  auto* cmd = app.add_subcommand(
      "run", "Run a YAML sweep and write CSV reports (exit 1 if a row ends error, oom or wrong)");
  cmd->add_option("config", a->config, "Sweep config (YAML)")->required();
  cmd->add_option("-o,--output", overrides.output,
                  "CSV path (default: the config's output, else results/<config>.csv)");
  cmd->add_option("--plugin-dir", a->plugin_dirs, kPluginDirHelp)->expected(1)->take_all();
  cmd->add_option("--backends", overrides.backends, "Only these backends (overrides the config)")
      ->delimiter(',');
  cmd->add_option("--passes", overrides.passes, "Only these passes: " + one_of(enum_names<Pass>()))
      ->delimiter(',');
  cmd->add_option("--timing-modes", overrides.timing_modes,
                  "CUDA timing modes, of cold, batch and graph (overrides the config)")
      ->delimiter(',');
  cmd->add_option("--points", overrides.points, "Only these point ids (as --dry-run prints them)")
      ->delimiter(',');
  cmd->add_option("--calibration", a->calibration,
                  "Calibration JSON for % of peak (default: results/calibration/<device>.json)");
  cmd->add_option("--isolation", a->isolation,
                  "worker: measure in worker processes that a crash or hang cannot take down "
                  "(default); none: in this process, for gdb and cuda-gdb")
      ->check(CLI::IsMember({"worker", "none"}));
  cmd->add_option("--repetitions", overrides.repetitions,
                  "Measure every (point, backend) N times, the sweep run through once per "
                  "repetition (default: measurement.repetitions, else 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--timeout-s", overrides.timeout_s,
                  "Seconds a worker may spend on one (point, backend) before it is killed "
                  "(default: measurement.timeout_s, else 600)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag(
      "--resume", a->resume,
      "Keep the complete rows of an interrupted report of the same sweep; measure the rest");
  cmd->add_flag("--force", a->force, "Overwrite an existing report");
  cmd->add_flag("--dry-run", a->dry_run, "Print the expanded points and backends; write nothing");
  cmd->add_flag("--no-summary", a->no_summary, "Do not print the summary table");
  cmd->add_option(
      "--shard", overrides.shard,
      "Run part K of N (K/N) of the sweep's (point, backend)s, split by estimated cost; "
      "`attnbench merge` joins the parts (default output <stem>.shard-K-of-N.csv)");
  cmd->add_option("--devices", a->devices,
                  "GPUs to measure on at once, one worker each, from one queue into one report: "
                  "0,1,... or all");
  cmd->add_flag("--check", a->check,
                "Exit 1 when a row misses a prediction of the config's expect: block");
  cmd->add_flag("--trace", a->trace,
                "Write a Chrome trace (Perfetto, chrome://tracing) of a few calls per (point, "
                "backend) to <output stem>.traces/");
  return {cmd, [a] { return cmd_run(*a); }, [a] { return a->isolation == "none"; }};
}

}  // namespace attnbench
