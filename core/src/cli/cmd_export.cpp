#include "base/errors.hpp"
#include "cli/commands.hpp"
#include "report/csv.hpp"
#include "report/export_gbench.hpp"

#include <fstream>
#include <iostream>

namespace attnbench {

int cmd_export(const std::string& report, const std::string& format, const std::string& output) {
  const CsvTable table = read_csv(report);
  if (format != "gbench") throw InputError("export: unknown format '" + format + "'; use gbench");
  const SampleSets samples = read_samples(report);
  if (output.empty()) {
    write_gbench_json(table, samples, std::cout);
    return 0;
  }
  std::ofstream out(output);
  if (!out) throw InputError(output + ": cannot write");
  write_gbench_json(table, samples, out);
  if (!out.flush()) throw InputError(output + ": cannot write");
  std::cerr << "wrote " << output << '\n';
  return 0;
}

}  // namespace attnbench
