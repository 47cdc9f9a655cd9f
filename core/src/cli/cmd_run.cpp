#include "base/names.hpp"
#include "base/time.hpp"
#include "cli/commands.hpp"
#include "cli/judging_writer.hpp"
#include "isolate/measurer.hpp"
#include "measure/device/calibration.hpp"
#include "report/csv.hpp"
#include "report/progress.hpp"
#include "report/report_writer.hpp"
#include "report/resume.hpp"
#include "report/summary.hpp"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <unistd.h>

namespace attnbench {

namespace {

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
  if (!options.peak_tflops && host.cuda_available) {
    const std::string path =
        calibration.empty() ? default_calibration_path(host.device_name) : calibration;
    if (auto c = load_calibration(path))
      options.peak_tflops = c->bf16_matmul_tflops;
    else if (!calibration.empty())
      throw InputError(path + ": cannot read the calibration file");
  }
  return options;
}

std::unique_ptr<Measurer> measurer(const RunArgs& args) {
#ifdef ATTNBENCH_WITH_MEASURE
  if (args.isolation == "none") return in_process_measurer(args.plugin_dirs);
#endif
  return isolated_measurer(measure_executable(), args.plugin_dirs);
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

// One repetition's task, in the order a run takes them: the whole sweep once per repetition, so
// drift between repetitions hits every backend alike.
struct Job {
  int repetition;
  const Task* task;
};

// Each measurer (one per GPU with --devices, each on a thread of its own) takes the next job from
// one queue and hands its records to `judged`. A measurer that throws stops the others after their
// current job; the first error is rethrown.
void run_jobs(const std::vector<Job>& jobs, const RunPlan& plan,
              const std::vector<std::unique_ptr<Measurer>>& measurers,
              const std::vector<std::string>& devices, Progress& progress, JudgingWriter& judged) {
  const int repetitions = plan.config.measurement.repetitions;
  std::mutex queue_mutex;  // the queue, the progress line and stderr
  size_t next = 0;
  auto drain = [&](Measurer& m, const std::string& device) {
    while (true) {
      Job job;
      {
        const std::lock_guard<std::mutex> lock(queue_mutex);
        if (next == jobs.size()) return;
        job = jobs[next++];
        progress.begin(
            plan.points[job.task->point].id + " " + job.task->backend +
            (repetitions > 1 ? " (repetition " + std::to_string(job.repetition + 1) + ")" : "") +
            (device.empty() ? "" : " on GPU " + device));
      }
      const Point& point = plan.points[job.task->point];
      BackendRecords records = m.measure(point, job.task->backend);
      records.repetition = job.repetition;
      for (Row& row : records.rows) row.repetition = job.repetition, row.device_index = device;
      for (KernelRow& k : records.kernels) k.repetition = job.repetition;
      if (!records.notes.empty()) {
        const std::lock_guard<std::mutex> lock(queue_mutex);
        std::cerr << "\nattnbench: " << job.task->backend << " @ " << point.id << ": "
                  << records.notes << '\n';
      }
      judged.add(std::move(records));
      const std::lock_guard<std::mutex> lock(queue_mutex);
      progress.end();
    }
  };
  if (measurers.size() == 1)
    return drain(*measurers.front(), devices.empty() ? "" : devices.front());
  std::vector<std::exception_ptr> errors(measurers.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < measurers.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        drain(*measurers[i], devices[i]);
      } catch (...) {
        errors[i] = std::current_exception();
        const std::lock_guard<std::mutex> lock(queue_mutex);
        next = jobs.size();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace

int cmd_run(const RunArgs& args) {
  SweepConfig config = load_config(args.config);
  const std::string output = output_path(config, args.overrides);
  if (!args.dry_run && !args.resume && !args.force && std::filesystem::exists(output))
    throw InputError(output +
                     " exists: --resume measures only what it lacks and appends, --force "
                     "overwrites it");

  // Workers start before this process could touch CUDA; their hello says what the host has.
  std::vector<std::unique_ptr<Measurer>> measurers;
  measurers.push_back(measurer(args));
  const Measurer& first = *measurers.front();
  for (const auto& f : first.failures()) {
    if (f.duplicate) throw InputError(f.reason);  // which of the two would be measured?
    std::cerr << "attnbench: plugin " << f.file << " not loaded: " << f.reason << '\n';
  }
  if (first.backend_names().empty())
    throw InputError("no backend plugins found in " +
                     folder_list(plugin_search_path(args.plugin_dirs)));
  const RunPlan plan = plan_run(std::move(config), args.overrides, first.backend_names(),
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
      measurers.push_back(isolated_measurer(measure_executable(), args.plugin_dirs, d));
  }

  RunOptions options = run_options(plan, measurers.front()->host(), args.calibration, args.trace);
  if (plan.shard) options.info.shard = plan.shard->text();
  std::set<RecordKey> done;
  if (args.resume && std::filesystem::exists(output)) {
    const Resumed resumed =
        resume_report(read_report_texts(output), output, plan.fingerprint, options.info.device_name,
                      options.info.torch_version, plan.config.measurement.timing_modes.size());
    write_report_texts(output, resumed.kept);
    done = resumed.done;
    std::cerr << "attnbench: resuming " << output << ": " << done.size()
              << " (point, backend) done, measuring the rest\n";
  }
  ReportWriter writer(output, plan.config.measurement.keep_samples, args.resume);
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
  JudgingWriter judged(writer, plan.config.expect, std::move(expected));

  run_jobs(jobs, plan, measurers, devices, progress, judged);
  progress.finish();
  std::cerr << "wrote " << writer.rows_path() << " and " << writer.kernels_path() << '\n';
  if (!args.no_summary) print_summary(read_csv(writer.rows_path()), std::cout);
  int exit_code = 0;
  if (judged.failed_rows() > 0) {
    std::cerr << "attnbench: " << judged.failed_rows()
              << " row(s) ended error, oom, wrong, crashed or timeout (see their reason)\n";
    exit_code = 1;
  }
  if (judged.missed_rows() > 0) {
    std::cerr << "attnbench: " << judged.missed_rows()
              << " row(s) missed a prediction (their expectation column says which)"
              << (args.check ? "" : "; --check makes that exit 1") << '\n';
    if (args.check) exit_code = 1;
  }
  return exit_code;
}

}  // namespace attnbench
