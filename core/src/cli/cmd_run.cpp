#include "base/time.hpp"
#include "cli/commands.hpp"
#include "measure/device/calibration.hpp"
#include "measure/device/host_info.hpp"
#include "measure/runner.hpp"
#include "plugins/plugin_loader.hpp"
#include "report/csv.hpp"
#include "report/progress.hpp"
#include "report/report_writer.hpp"
#include "report/summary.hpp"

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

RunOptions run_options(const RunPlan& plan, const HostInfo& host, const std::string& calibration) {
  RunOptions options;
  options.measurement = plan.config.measurement;
  options.tolerance = plan.config.tolerance;
  options.seed = plan.config.seed;
  options.info = {host.device_name, host.torch_version, git_sha(), utc_now_iso8601(),
                  plan.config.file};
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

}  // namespace

int cmd_run(const RunArgs& args) {
  SweepConfig config = load_config(args.config);
  const HostInfo host = query_host();
  const auto dir =
      args.plugin_dir.empty() ? default_plugin_dir() : std::filesystem::path(args.plugin_dir);
  const PluginSet plugins = load_plugins(dir);
  for (const auto& f : plugins.failures)
    std::cerr << "attnbench: plugin " << f.file << " not loaded: " << f.reason << '\n';
  if (plugins.backends.empty()) throw InputError("no backend plugins found in " + dir.string());
  const RunPlan plan =
      plan_run(std::move(config), args.overrides, plugins.names(), host.cuda_available);
  if (args.dry_run) {
    print_dry_run(plan);
    return 0;
  }

  Runner runner(host, run_options(plan, host, args.calibration));
  ReportWriter writer(plan.output, plan.config.measurement.keep_samples);
  Progress progress(plan.points.size() * plan.backends.size(), std::cerr, stderr_is_terminal());
  int failed_rows = 0;
  for (const auto& point : plan.points) {
    for (const auto& name : plan.backends) {
      progress.begin(point.id + " " + name);
      const BackendRecords records = runner.measure(point, *plugins.find(name));
      writer.write(records);
      for (const Row& row : records.rows)
        failed_rows +=
            row.status == Status::error || row.status == Status::oom || row.status == Status::wrong;
      if (!records.notes.empty())
        std::cerr << "\nattnbench: " << name << " @ " << point.id << ": " << records.notes << '\n';
      progress.end();
    }
  }
  progress.finish();
  std::cerr << "wrote " << writer.rows_path() << " and " << writer.kernels_path() << '\n';
  if (!args.no_summary) print_summary(read_csv(writer.rows_path()), std::cout);
  if (failed_rows > 0) {
    std::cerr << "attnbench: " << failed_rows
              << " row(s) ended error, oom or wrong (see their reason)\n";
    return 1;
  }
  return 0;
}

}  // namespace attnbench
