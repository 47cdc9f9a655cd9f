#include "base/time.hpp"
#include "cli/commands.hpp"
#include "isolate/measurer.hpp"
#include "measure/device/calibration.hpp"
#include "records/expectations.hpp"
#include "report/csv.hpp"
#include "report/progress.hpp"
#include "report/report_writer.hpp"
#include "report/resume.hpp"
#include "report/summary.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace attnbench {

namespace {

void print_dry_run(const RunPlan& plan) {
  std::cout << plan.points.size() << " points x " << plan.backends.size()
            << " backends = " << plan.points.size() * plan.backends.size() << " measurements, "
            << plan.config.measurement.timing_modes.size() << " timing mode(s) on CUDA points\n";
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

// Rows wait for the rows their predictions compare against (same point and repetition), then are
// judged and written. With the referenced backends listed first, as in the shipped configs, none
// waits; a waiting (point, backend) is written when its point ends.
class JudgingWriter {
 public:
  JudgingWriter(ReportWriter& writer, const Expectations& expect,
                const std::vector<std::string>& backends)
      : writer_(writer), expect_(expect), backends_(backends) {}

  void add(BackendRecords records) {
    measured_.push_back(std::move(records));
    written_.push_back(false);
    for (size_t i = 0; i < measured_.size(); ++i)
      if (!written_[i] && ready(measured_[i].backend)) write(i);
  }

  void end_point() {
    for (size_t i = 0; i < measured_.size(); ++i)
      if (!written_[i]) write(i);
    measured_.clear();
    written_.clear();
  }

  int failed_rows() const { return failed_rows_; }
  int missed_rows() const { return missed_rows_; }

 private:
  bool ready(const std::string& backend) const {
    for (const std::string& peer : peers_of(expect_, backend)) {
      const bool in_run = std::find(backends_.begin(), backends_.end(), peer) != backends_.end();
      const bool measured = std::any_of(measured_.begin(), measured_.end(),
                                        [&](const BackendRecords& r) { return r.backend == peer; });
      if (in_run && !measured) return false;
    }
    return true;
  }

  void write(size_t i) {
    BackendRecords& records = measured_[i];
    for (Row& row : records.rows) {
      row.expectation = judge_row(row, expect_, [&](const std::string& backend) -> const Row* {
        for (const BackendRecords& other : measured_)
          if (other.backend == backend)
            for (const Row& r : other.rows)
              if (r.timing_mode == row.timing_mode) return &r;
        return nullptr;
      });
      failed_rows_ += row.status != Status::ok && row.status != Status::unsupported;
      missed_rows_ += is_missed(row.expectation);
    }
    writer_.write(records);
    written_[i] = true;
  }

  ReportWriter& writer_;
  const Expectations& expect_;
  const std::vector<std::string>& backends_;
  std::vector<BackendRecords> measured_;  // this point's, this repetition's
  std::vector<bool> written_;
  int failed_rows_ = 0, missed_rows_ = 0;
};

}  // namespace

int cmd_run(const RunArgs& args) {
  SweepConfig config = load_config(args.config);
  const std::string output = output_path(config, args.overrides);
  if (!args.dry_run && !args.resume && !args.force && std::filesystem::exists(output))
    throw InputError(output +
                     " exists: --resume measures only what it lacks and appends, --force "
                     "overwrites it");

  // Workers start before this process could touch CUDA; their hello says what the host has.
  const std::unique_ptr<Measurer> m = measurer(args);
  for (const auto& f : m->failures()) {
    if (f.duplicate) throw InputError(f.reason);  // which of the two would be measured?
    std::cerr << "attnbench: plugin " << f.file << " not loaded: " << f.reason << '\n';
  }
  if (m->backend_names().empty())
    throw InputError("no backend plugins found in " +
                     folder_list(plugin_search_path(args.plugin_dirs)));
  const RunPlan plan =
      plan_run(std::move(config), args.overrides, m->backend_names(), m->host().cuda_available);
  if (args.dry_run) {
    print_dry_run(plan);
    return 0;
  }

  const RunOptions options = run_options(plan, m->host(), args.calibration, args.trace);
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
  m->setup(options);
  const int repetitions = plan.config.measurement.repetitions;
  Progress progress(plan.points.size() * plan.backends.size() * static_cast<size_t>(repetitions),
                    std::cerr, stderr_is_terminal());
  JudgingWriter judged(writer, plan.config.expect, plan.backends);
  // The whole sweep once per repetition: drift between repetitions hits every backend alike.
  for (int rep = 0; rep < repetitions; ++rep) {
    for (const auto& point : plan.points) {
      for (const auto& name : plan.backends) {
        if (done.count({point.id, name, rep})) {
          progress.end();
          continue;
        }
        progress.begin(point.id + " " + name +
                       (repetitions > 1 ? " (repetition " + std::to_string(rep + 1) + ")" : ""));
        BackendRecords records = m->measure(point, name);
        records.repetition = rep;
        for (Row& row : records.rows) row.repetition = rep;
        for (KernelRow& k : records.kernels) k.repetition = rep;
        if (!records.notes.empty())
          std::cerr << "\nattnbench: " << name << " @ " << point.id << ": " << records.notes
                    << '\n';
        judged.add(std::move(records));
        progress.end();
      }
      judged.end_point();
    }
  }
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
