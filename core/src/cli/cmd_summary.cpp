#include "cli/commands.hpp"
#include "records/fields.hpp"
#include "report/compare.hpp"
#include "report/summary.hpp"

#include <iostream>

namespace attnbench {

int cmd_summary(const std::string& report) {
  const CsvTable table = read_csv(report);
  check_report(table, {});
  print_summary(table, std::cout);
  return 0;
}

}  // namespace attnbench

namespace attnbench {

int cmd_columns() {
  std::cout << columns_markdown();
  return 0;
}

}  // namespace attnbench
