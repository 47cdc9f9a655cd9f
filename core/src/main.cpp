// attnbench command line: list, run, compare, summary, calibrate.
// Exit codes: 0 done; 1 a row ended error, oom or wrong, a failure stopped the run, or compare found
// a regression; 2 bad input (config, command line, CSV), and then nothing is written.
#include "calibration.hpp"
#include "compare.hpp"
#include "config.hpp"
#include "csv.hpp"
#include "errors.hpp"
#include "host_info.hpp"
#include "plugin_loader.hpp"
#include "progress.hpp"
#include "runner.hpp"
#include "summary.hpp"
#include "sweep.hpp"
#include "table.hpp"
#include "types.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#ifndef ATTNBENCH_GIT_SHA
#define ATTNBENCH_GIT_SHA "unknown"
#endif

namespace attnbench {
namespace {

std::string git_sha() {
  // The device machine gets a copy of the tree without .git: the caller passes the commit.
  if (const char* env = std::getenv("ATTNBENCH_GIT_SHA"); env && *env) return env;
  return ATTNBENCH_GIT_SHA;
}

std::filesystem::path plugin_dir_or_default(const std::string& dir) {
  return dir.empty() ? default_plugin_dir() : std::filesystem::path(dir);
}

void print_failures(const PluginSet& plugins) {
  for (const auto& f : plugins.failures) std::cerr << "attnbench: plugin " << f.file << " not loaded: " << f.reason << '\n';
}

int cmd_list(const std::string& plugin_dir) {
  const auto dir = plugin_dir_or_default(plugin_dir);
  const PluginSet plugins = load_plugins(dir);
  std::cout << "plugins in " << dir.string() << ":\n";
  TextTable table;
  table.header = {"backend", "description", "file"};
  for (const auto& b : plugins.backends)
    table.rows.push_back({b.name, b.description, std::filesystem::path(b.file).filename().string()});
  table.print(std::cout, false);
  if (!plugins.failures.empty()) {
    std::cout << "\nnot loaded:\n";
    for (const auto& f : plugins.failures) std::cout << "  " << f.file << ": " << f.reason << '\n';
  }
  return 0;
}

struct RunArgs {
  std::string config;
  std::string output;
  std::string plugin_dir;
  std::string calibration;
  std::vector<std::string> backends;
  std::vector<std::string> passes;
  std::vector<std::string> timing_modes;
  std::vector<std::string> points;
  bool dry_run = false;
  bool no_summary = false;
};

std::string sibling(const std::string& csv, const std::string& suffix) {
  std::filesystem::path p(csv);
  return (p.parent_path() / (p.stem().string() + suffix)).string();
}

int cmd_run(const RunArgs& args) {
  SweepConfig config = load_config(args.config);
  // Command-line overrides are checked like the file's values.
  if (!args.backends.empty()) {
    config.backends = args.backends;
    config.backend_marks.assign(args.backends.size(), {0, 0});
  }
  try {
    if (!args.passes.empty()) config.measurement.passes = parse_passes(args.passes);
  } catch (const ListItemError& e) {
    throw InputError(std::string("--passes: ") + e.what());
  }
  try {
    if (!args.timing_modes.empty()) config.measurement.timing_modes = parse_timing_modes(args.timing_modes);
  } catch (const ListItemError& e) {
    throw InputError(std::string("--timing-modes: ") + e.what());
  }
  std::string output = !args.output.empty() ? args.output
                       : !config.output.empty() ? config.output
                                                : "results/" + std::filesystem::path(args.config).stem().string() + ".csv";

  const HostInfo host = query_host();
  std::vector<Point> points = expand_sweep(config, host.cuda_available);
  if (!args.points.empty()) {
    std::vector<Point> chosen;
    for (const auto& id : args.points) {
      auto it = std::find_if(points.begin(), points.end(), [&](const Point& p) { return p.id == id; });
      if (it == points.end()) throw InputError("--points: the sweep has no point '" + id + "' (see --dry-run)");
      chosen.push_back(*it);
    }
    points = std::move(chosen);
  }
  const PluginSet plugins = load_plugins(plugin_dir_or_default(args.plugin_dir));
  print_failures(plugins);

  std::vector<const LoadedBackend*> backends;
  if (config.backends.empty()) {
    for (const auto& b : plugins.backends) backends.push_back(&b);
  } else {
    for (size_t i = 0; i < config.backends.size(); ++i) {
      const LoadedBackend* b = plugins.find(config.backends[i]);
      if (!b) {
        std::string found;
        for (const auto& n : plugins.names()) found += (found.empty() ? "" : ", ") + n;
        const std::string msg = "no plugin provides backend '" + config.backends[i] + "' (found: " +
                                (found.empty() ? "none" : found) + ")";
        const auto [line, column] = config.backend_marks[i];
        if (line > 0) throw ConfigError(config.file, line, column, "backends", msg);
        throw InputError("--backends: " + msg);
      }
      backends.push_back(b);
    }
  }
  if (backends.empty()) throw InputError("no backend plugins found in " + plugin_dir_or_default(args.plugin_dir).string());

  if (args.dry_run) {
    std::cout << points.size() << " points x " << backends.size() << " backends = " << points.size() * backends.size()
              << " measurements, " << config.measurement.timing_modes.size() << " timing mode(s) on CUDA points\n";
    for (const auto& p : points) std::cout << "  " << p.id << '\n';
    std::cout << "backends:";
    for (const auto* b : backends) std::cout << ' ' << b->name;
    std::cout << "\noutput: " << output << " (not written: dry run)\n";
    return 0;
  }

  RunOptions options;
  options.measurement = config.measurement;
  options.tolerance = config.tolerance;
  options.seed = config.seed;
  options.info = {host.device_name, host.torch_version, git_sha(), utc_now_iso8601(), config.file};
  options.peak_tflops = config.peak_tflops;
  if (!options.peak_tflops && host.cuda_available) {
    const std::string path = args.calibration.empty() ? default_calibration_path(host.device_name) : args.calibration;
    if (auto c = load_calibration(path)) options.peak_tflops = c->bf16_matmul_tflops;
    else if (!args.calibration.empty()) throw InputError(path + ": cannot read the calibration file");
  }

  CsvWriter rows_csv(output, row_header());
  CsvWriter kernels_csv(sibling(output, ".kernels.csv"), kernel_row_header());
  std::unique_ptr<CsvWriter> samples_csv;
  if (config.measurement.keep_samples)
    samples_csv = std::make_unique<CsvWriter>(sibling(output, ".samples.csv"),
                                              std::vector<std::string>{"point_id", "backend", "timing_mode", "sample", "time_ms"});

  Runner runner(host, options);
  Progress progress(points.size() * backends.size(), std::cerr, stderr_is_terminal());
  int failed_rows = 0;
  for (const auto& point : points) {
    for (const auto* backend : backends) {
      progress.begin(point.id + " " + backend->name);
      const BackendResult result = runner.measure(point, *backend);
      for (const auto& row : result.rows) {
        rows_csv.write(row_fields(row));
        failed_rows += row.status == Status::error || row.status == Status::oom || row.status == Status::wrong;
      }
      for (const auto& k : result.kernels) kernels_csv.write(kernel_row_fields(k));
      if (samples_csv)
        for (const auto& s : result.samples)
          for (size_t i = 0; i < s.time_ms.size(); ++i)
            samples_csv->write({point.id, backend->name, s.timing_mode, std::to_string(i), format_number(s.time_ms[i])});
      if (!result.notes.empty()) std::cerr << "\nattnbench: " << backend->name << " @ " << point.id << ": " << result.notes << '\n';
      progress.end();
    }
  }
  progress.finish();
  std::cerr << "wrote " << rows_csv.path() << " and " << kernels_csv.path() << '\n';
  if (!args.no_summary) print_summary(read_csv(rows_csv.path()), std::cout);
  if (failed_rows > 0) {
    std::cerr << "attnbench: " << failed_rows << " row(s) ended error, oom or wrong (see their reason)\n";
    return 1;
  }
  return 0;
}

struct CompareArgs {
  std::vector<std::string> files;
  std::string baseline;
  std::vector<std::string> metrics;
  bool markdown = false;
  double fail_pct = -1;  // -1: not given
};

int cmd_compare(const CompareArgs& args) {
  CompareOptions options;
  if (!args.metrics.empty()) options.metrics = args.metrics;
  if (args.fail_pct >= 0) options.fail_on_regression_pct = args.fail_pct;
  Comparison comparison;
  if (args.files.size() == 1) {
    if (args.baseline.empty()) throw InputError("compare: one report needs --baseline BACKEND; two reports compare run against run");
    options.baseline_backend = args.baseline;
    comparison = compare_backends(read_csv(args.files[0]), options);
  } else if (args.files.size() == 2) {
    if (!args.baseline.empty()) throw InputError("compare: --baseline compares backends inside one report; give one file");
    comparison = compare_reports(read_csv(args.files[0]), read_csv(args.files[1]), options);
  } else {
    throw InputError("compare: give one report (with --baseline) or two reports");
  }
  print_comparison(comparison, std::cout, args.markdown);
  return comparison.regressions > 0 ? 1 : 0;
}

int cmd_calibrate(const std::string& output) {
  const HostInfo host = query_host();
  const Calibration c = calibrate_device(host);
  const std::string path = output.empty() ? default_calibration_path(host.device_name) : output;
  save_calibration(c, path);
  std::cout << c.device_name << ": bf16 matmul " << c.bf16_matmul_tflops << " TFLOP/s, device copy " << c.copy_gbps
            << " GB/s\nwrote " << path << '\n';
  return 0;
}

}  // namespace
}  // namespace attnbench

int main(int argc, char** argv) {
  using namespace attnbench;
  CLI::App app{"attnbench: which attention backend is fastest for your shapes, why, and what it costs"};
  app.require_subcommand(1);

  std::string list_plugin_dir;
  auto* list = app.add_subcommand("list", "Show the backend plugins found, and why any failed to load");
  list->add_option("--plugin-dir", list_plugin_dir, "Folder with attnbench_*.so plugins (default: plugins/ beside the executable)");

  RunArgs run_args;
  auto* run = app.add_subcommand("run", "Run a YAML sweep and write CSV reports (exit 1 if a row ends error, oom or wrong)");
  run->add_option("config", run_args.config, "Sweep config (YAML)")->required();
  run->add_option("-o,--output", run_args.output, "CSV path (default: the config's output, else results/<config>.csv)");
  run->add_option("--plugin-dir", run_args.plugin_dir, "Folder with attnbench_*.so plugins");
  run->add_option("--backends", run_args.backends, "Only these backends (overrides the config)")->delimiter(',');
  run->add_option("--passes", run_args.passes, "Only these passes: correctness,timing,cpu,memory,ops,kernels")->delimiter(',');
  run->add_option("--timing-modes", run_args.timing_modes, "CUDA timing modes: cold,batch,graph (overrides the config)")->delimiter(',');
  run->add_option("--points", run_args.points, "Only these point ids (as --dry-run prints them)")->delimiter(',');
  run->add_option("--calibration", run_args.calibration, "Calibration JSON for % of peak (default: results/calibration/<device>.json)");
  run->add_flag("--dry-run", run_args.dry_run, "Print the expanded points and backends; write nothing");
  run->add_flag("--no-summary", run_args.no_summary, "Do not print the summary table");

  CompareArgs compare_args;
  auto* compare = app.add_subcommand("compare", "Compare two reports, or backends inside one report");
  compare->add_option("reports", compare_args.files, "base.csv new.csv, or one report with --baseline")->required();
  compare->add_option("--baseline", compare_args.baseline, "Backend to compare the others against (one report)");
  compare->add_option("--metric", compare_args.metrics, "Columns to compare (default time_ms_median)")->delimiter(',');
  compare->add_flag("--markdown", compare_args.markdown, "Markdown tables");
  compare->add_option("--fail-on-regression", compare_args.fail_pct,
                      "Exit 1 if a row is worse beyond its noise band (the two rows' noise, at least 1%; none for "
                      "counts) and by more than PCT percent")
      ->check(CLI::NonNegativeNumber);

  std::string summary_file;
  auto* summary = app.add_subcommand("summary", "Print the summary table of a report");
  summary->add_option("report", summary_file, "Report CSV")->required();

  std::string calibration_output;
  auto* calibrate = app.add_subcommand("calibrate", "Measure the GPU's bf16 matmul and copy ceilings and store them");
  calibrate->add_option("-o,--output", calibration_output, "JSON path (default: results/calibration/<device>.json)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    if (*list) return cmd_list(list_plugin_dir);
    if (*run) return cmd_run(run_args);
    if (*compare) return cmd_compare(compare_args);
    if (*summary) {
      const CsvTable table = read_csv(summary_file);
      check_report(table, {});
      print_summary(table, std::cout);
      return 0;
    }
    if (*calibrate) return cmd_calibrate(calibration_output);
  } catch (const InputError& e) {
    std::cerr << "attnbench: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "attnbench: error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
