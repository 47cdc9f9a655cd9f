#include "run/run_sweep.hpp"

#include "base/names.hpp"
#include "base/time.hpp"
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

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include <unistd.h>

namespace attnbench {

namespace {

RunOptions run_options(const RunPlan& plan, const HostInfo& host, const RunRequest& request) {
  RunOptions options;
  options.measurement = plan.config.measurement;
  options.measurement.trace = request.trace;
  options.tolerance = plan.config.tolerance;
  options.seed = plan.config.seed;
  options.info = {host.device_name,  host.torch_version, request.git_sha,
                  utc_now_iso8601(), plan.config.file,   plan.fingerprint};
  options.info.host_name = machine_name();
  options.info.host_cpus = sysconf(_SC_NPROCESSORS_ONLN);
  options.peak_tflops = plan.config.peak_tflops;
  options.peak_tflops_fp8 = plan.config.peak_tflops_fp8;
  if (host.cuda_available) {
    const std::string& given = request.calibration;
    const std::string path = given.empty() ? default_calibration_path(host.device_name) : given;
    if (auto c = load_calibration(path)) {
      if (!options.peak_tflops) options.peak_tflops = c->bf16_matmul_tflops;
      if (!options.peak_tflops_fp8) options.peak_tflops_fp8 = c->fp8_matmul_tflops;
      options.bandwidth_gbps = c->bandwidth_gbps();
    } else if (!given.empty())
      throw InputError(path + ": cannot read the calibration file");
  }
  if (plan.shard) options.info.shard = plan.shard->text();
  return options;
}

// The plugin folders, and the config's backends of other kinds (those --backends keeps), each
// checked available (a kind this attnbench cannot run refuses the config at its entry) and
// prepared (a source compiled, unless a dry run) before any worker starts.
BackendSources backend_sources(const RunRequest& request, const SweepConfig& config) {
  const auto& only = request.overrides.backends;
  std::vector<BackendSpec> specs;
  for (const BackendSpec& spec : config.backends)
    if (only.empty() || std::find(only.begin(), only.end(), spec.name) != only.end())
      specs.push_back(spec);
  return prepare_backends(request.plugin_dirs, specs, config.file, request.dry_run);
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

}  // namespace

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
    // A worker given a GPU that is not there would see none and call every CUDA point
    // unsupported, and its rows would name a GPU nobody has: refused, with or without GPUs.
    if (host.cuda_device_count < 1)
      throw InputError("--devices: GPU " + item +
                       " does not exist (this machine has no GPU); without --devices a run "
                       "measures its CPU points in one worker");
    if (item.size() > 9 || std::stoi(item) >= host.cuda_device_count)
      throw InputError("--devices: GPU " + item + " does not exist (this machine has " +
                       std::to_string(host.cuda_device_count) + ")");
    // By its number, not its text: 0 and 00 are one GPU, which two workers would share.
    const std::string gpu = std::to_string(std::stoi(item));
    if (std::find(out.begin(), out.end(), gpu) != out.end())
      throw InputError("--devices: GPU " + gpu + " is listed twice");
    out.push_back(gpu);
  }
  return out;
}

namespace {

// A report is a regular file beside its side files: a folder, a device (/dev/null) or a pipe in
// its place would take the rows and lose the side files, or be replaced, after the measuring.
void check_output_path(const std::string& output) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(output, ec);
  if (!output.empty() && output.back() == '/')  // a folder, whether it is there or not yet
    throw InputError("-o " + output + ": names a folder; name the report's file (" +
                     (fs::path(output) / "report.csv").string() + ")");
  if (fs::is_directory(status))
    throw InputError("-o " + output + ": is a folder; name the report's file (" +
                     (fs::path(output) / "report.csv").string() + ")");
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw InputError("-o " + output + ": is not a regular file; a report is a CSV file with side "
                     "files beside it (.kernels.csv, .samples.csv)");
}

}  // namespace

RunOutcome run_sweep(const RunRequest& request) {
  Sweep sweep = load_sweep(request.config);
  const SweepConfig& config = sweep.config;
  const std::string output = output_path(config, request.overrides);
  check_output_path(output);
  std::optional<OutputLock> lock;  // held until the run ends, however it ends
  if (!request.dry_run) lock.emplace(output);
  // A report and its side files are one unit: any of them there is the report there.
  if (!request.dry_run && !request.resume && !request.force)
    for (const std::string& file :
         {output, sibling(output, side::kernels), sibling(output, side::samples)})
      if (std::filesystem::exists(file))
        throw InputError(file +
                         " exists: --resume measures only what the report lacks and appends, "
                         "--force overwrites the report and its side files");

  // Workers start before this process could touch CUDA; their hello says what the host has.
  const BackendSources sources = backend_sources(request, config);
  std::vector<std::unique_ptr<Measurer>> measurers;
  measurers.push_back(request.measurer(sources, ""));
  const Measurer& first = *measurers.front();
  refuse_bad_backends(first.failures(), config);
  if (first.backend_names().empty())
    throw InputError("no backend plugins found in " +
                     folder_list(plugin_search_path(request.plugin_dirs)));
  RunOutcome outcome{plan_run(std::move(sweep), request.overrides, first.backend_names(),
                              first.host().cuda_available),
                     std::nullopt,
                     std::nullopt,
                     {}};
  const RunPlan& plan = outcome.plan;
  if (request.dry_run) return outcome;
  std::vector<std::string> devices;
  if (!request.devices.empty()) {
    devices = device_list(request.devices, first.host());
    measurers.clear();  // one worker per GPU, each seeing only its own
    for (const auto& d : devices) measurers.push_back(request.measurer(sources, d));
  }

  const RunOptions options = run_options(plan, measurers.front()->host(), request);
  std::set<RecordKey> done;
  bool append = false;
  if (request.resume && std::filesystem::exists(output)) {
    std::map<std::string, std::string> builds;
    for (const std::string& b : plan.backends) builds[b] = measurers.front()->backend_build(b);
    const Resumed resumed =
        resume_report(read_report_texts(output), output, plan.fingerprint, options.info.device_name,
                      options.info.torch_version, plan.config.measurement.timing_modes.size(),
                      builds);
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
  JudgingWriter judged(writer, plan.expect, std::move(expected),
                       plan.shard ? std::set<std::string>(plan.backends.begin(), plan.backends.end())
                                  : std::set<std::string>{});

  run_jobs(jobs, plan, measurers, devices, progress, judged);
  progress.finish();
  if (!done.empty())  // the kept rows' and the new rows' predictions, judged as one run would
    replace_file_text(writer.rows_path(),
                      rejudged_report(complete_records(read_report_texts(output).rows), output,
                                      plan.expect));
  outcome.rows_path = writer.rows_path();
  outcome.kernels_path = writer.kernels_path();
  outcome.report = typed_rows(read_csv(writer.rows_path()));
  return outcome;
}

}  // namespace attnbench
