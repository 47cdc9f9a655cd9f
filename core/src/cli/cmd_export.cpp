#include "analysis/export_gbench.hpp"
#include "base/errors.hpp"
#include "cli/commands.hpp"
#include "write/csv.hpp"
#include "write/report_writer.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <iostream>
#include <memory>

namespace attnbench {

namespace {

// Never over a measurement: not the report or its side files, and nothing else without --force.
void check_output(const std::string& report, const std::string& output, bool force) {
  namespace fs = std::filesystem;
  if (!fs::exists(output)) return;
  for (const std::string& measured :
       {report, sibling(report, side::kernels), sibling(report, side::samples)}) {
    std::error_code ec;
    if (fs::exists(measured) && fs::equivalent(output, measured, ec))
      throw InputError("export: -o " + output + " is " + measured +
                       ", what was measured; name another file");
  }
  if (!force) throw InputError("export: " + output + " exists: --force overwrites it");
}

// A report in another format: "gbench" (Google Benchmark JSON) to `output`, or stdout when empty.
int cmd_export(const std::string& report, const std::string& format, const std::string& output,
               bool force) {
  const CsvTable table = read_csv(report);
  if (format != "gbench") throw InputError("export: unknown format '" + format + "'; use gbench");
  const SampleSets samples = read_samples(report);
  if (output.empty()) {
    write_gbench_json(table, samples, std::cout);
    return 0;
  }
  check_output(report, output, force);
  // Made whole before the file is opened: a report refused on the way leaves no empty file.
  std::ostringstream json;
  write_gbench_json(table, samples, json);
  std::ofstream out(output);
  if (!out) throw InputError(output + ": cannot write");
  out << json.str();
  if (!out.flush()) throw InputError(output + ": cannot write");
  std::cerr << "wrote " << output << '\n';
  return 0;
}

}  // namespace

Subcommand add_export(CLI::App& app) {
  struct Args {
    std::string report, format, output;
    bool force = false;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "export", "Write a report in another format (gbench: Google Benchmark JSON)");
  cmd->add_option("report", a->report, "Report CSV")->required();
  cmd->add_option("--format", a->format, "gbench")->required()->check(CLI::IsMember({"gbench"}));
  cmd->add_option("-o,--output", a->output, "Output file (default: standard output)");
  cmd->add_flag("--force", a->force, "Overwrite an existing output file (never the report)");
  return {cmd, [a] { return cmd_export(a->report, a->format, a->output, a->force); }};
}

}  // namespace attnbench
