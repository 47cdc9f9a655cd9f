// `attnbench plot`: pictures of a report, or of a comparison, drawn by plots.py with matplotlib
// (the field's plotting library) in a Python process of its own.
#include "analysis/compare.hpp"
#include "base/errors.hpp"
#include "base/files.hpp"
#include "base/names.hpp"
#include "cli/commands.hpp"
#include "write/csv.hpp"
#include "write/report_writer.hpp"
#include "write/schema.hpp"

#define BOOST_PROCESS_USE_STD_FS
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/io.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>

namespace attnbench {

namespace {

struct PlotArgs {
  std::vector<std::string> files;  // one report, or base and new
  std::string baseline;            // one report: compare its backends against this one
  std::string output;              // folder; default <stem>.plots beside the first report
  std::string format = "png";      // png | svg
  std::string timing_mode;         // which CUDA mode to draw; default cold, else the first present
};

namespace bp = boost::process;
namespace fs = std::filesystem;

// Beside the binary in a build tree, in ../share/attnbench when installed.
fs::path plots_script() {
  if (const char* env = std::getenv("ATTNBENCH_PLOTS_SCRIPT"); env && *env) return env;
  const fs::path exe_dir = boost::dll::program_location().parent_path();
  if (fs::exists(exe_dir / "plots.py")) return exe_dir / "plots.py";
  return (exe_dir / ".." / "share" / "attnbench" / "plots.py").lexically_normal();
}

fs::path python() {
  if (const char* env = std::getenv("ATTNBENCH_PYTHON"); env && *env) return env;
  if (const auto found = on_path("python3")) return *found;
  throw InputError("plot: no python3 on PATH (or set ATTNBENCH_PYTHON)");
}

int run_python(const std::vector<std::string>& args) {
  bp::child child(bp::exe = python().string(), bp::args = args);
  child.wait();
  return child.exit_code();
}

// The mode drawn when none is named: the first of the report's modes in the enum's order (cold,
// batch, graph, wall).
std::string default_mode(const CsvTable& report) {
  std::set<TimingMode> present;
  for (const Row& row : typed_rows(report)) present.insert(row.timing_mode);
  for (const auto& n : name_table<TimingMode>())
    if (!n.alias && present.count(n.value)) return n.name;
  return to_string(TimingMode::cold);
}

// 0 when every picture was drawn; 1 when Python, matplotlib or plots.py failed.
int cmd_plot(const PlotArgs& args) {
  if (args.files.empty() || args.files.size() > 2)
    throw InputError("plot: give one report, or two to plot their comparison");
  const bool comparison = args.files.size() == 2 || !args.baseline.empty();
  if (args.files.size() == 2 && !args.baseline.empty())
    throw InputError("plot: --baseline compares backends inside one report; give one file");
  const fs::path first(args.files.front());
  const std::string out_dir =
      args.output.empty() ? sibling(first.string(), side::plots) : args.output;

  // Bad input is found here, with the messages compare gives, before Python starts.
  std::vector<CsvTable> reports;
  for (const auto& file : args.files) {
    reports.push_back(read_csv(file));
    check_report(reports.back(), {"time_ms_median"});
    const CsvTable& t = reports.back();
    if (t.rows.empty()) throw InputError("plot: " + file + " has no rows, only its header");
    bool measured = false;
    for (size_t r = 0; r < t.rows.size() && !measured; ++r)
      measured = !t.at(r, "time_ms_median").empty();
    if (!measured)
      throw InputError("plot: " + file + " has no measured row (each row's status says why: " +
                       "attnbench summary " + file + ")");
  }
  if (fs::exists(out_dir) && !fs::is_directory(out_dir))
    throw InputError("plot -o " + out_dir + ": is a file; the pictures go in a folder");

  // The comparison too, so that an unknown baseline is refused before anything is written.
  std::optional<Comparison> c;
  if (comparison) {
    CompareOptions options;
    if (args.files.size() == 2) {
      c = compare_reports(reports[0], reports[1], options, read_samples(args.files[0]),
                          read_samples(args.files[1]));
    } else {
      options.baseline_backend = args.baseline;
      c = compare_backends(reports[0], options, read_samples(args.files[0]));
    }
    require_joined(*c, "plot");
  }

  const fs::path script = plots_script();
  if (!fs::exists(script)) throw InputError("plot: cannot find plots.py at " + script.string());
  if (run_python({"-c", "import matplotlib"}) != 0) {
    std::cerr << "attnbench: plot needs Python 3 with matplotlib (python3 -m pip install "
                 "matplotlib; tools/setup.sh installs it)\n";
    return 1;
  }
  fs::create_directories(out_dir);
  std::vector<std::string> command = {script.string()};
  if (c) {
    const std::string json = (fs::path(out_dir) / "compare.json").string();
    std::ofstream out(json);
    print_comparison(*c, out, CompareFormat::json);
    if (!out.flush()) throw std::runtime_error(json + ": cannot write");
    command.insert(command.end(), {"compare", json, out_dir, args.format});
  } else {
    command.insert(command.end(),
                   {"report", args.files.front(), out_dir, args.format,
                    args.timing_mode.empty() ? default_mode(reports.front()) : args.timing_mode});
  }
  const int code = run_python(command);
  if (code != 0) std::cerr << "attnbench: plots.py exited with " << code << '\n';
  return code == 0 ? 0 : 1;
}

}  // namespace

Subcommand add_plot(CLI::App& app) {
  auto a = std::make_shared<PlotArgs>();
  auto* cmd = app.add_subcommand(
      "plot",
      "Draw a report (TFLOP/s and time against seq_len, kernels and copies per backend) "
      "or a comparison (ratios with intervals) with matplotlib");
  cmd->add_option("reports", a->files, "report.csv, or base.csv new.csv")->required();
  cmd->add_option("--baseline", a->baseline, "Plot one report's backends against this one");
  cmd->add_option("-o,--output", a->output,
                  "Folder for the pictures (default: <report stem>.plots beside it)");
  cmd->add_option("--format", a->format, "png (default) or svg")
      ->check(CLI::IsMember({"png", "svg"}));
  cmd->add_option("--timing-mode", a->timing_mode,
                  "CUDA timing mode to draw (default: cold, else the first in the report)")
      ->check(CLI::IsMember(enum_names<TimingMode>()));
  return {cmd, [a] { return cmd_plot(*a); }};
}

}  // namespace attnbench
