#include "analysis/compare.hpp"
#include "analysis/summary.hpp"
#include "cli/commands.hpp"
#include "write/columns_page.hpp"
#include "write/schema.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

namespace attnbench {

namespace {

int cmd_summary(const std::string& report) {
  const CsvTable table = read_csv(report);
  check_report(table, {});
  print_summary(typed_rows(table), std::cout);
  return 0;
}

}  // namespace

Subcommand add_summary(CLI::App& app) {
  auto report = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("summary", "Print the summary table of a report");
  cmd->add_option("report", *report, "Report CSV")->required();
  return {cmd, [report] { return cmd_summary(*report); }};
}

Subcommand add_columns(CLI::App& app) {
  auto* cmd = app.add_subcommand("columns",
                                 "Print every report column and measurement key (docs/columns.md)");
  return {cmd, [] {
            std::cout << columns_markdown();
            return 0;
          }};
}

}  // namespace attnbench
