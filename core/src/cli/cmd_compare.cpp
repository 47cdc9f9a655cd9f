#include "cli/commands.hpp"
#include "report/compare.hpp"

#include <iostream>

namespace attnbench {

int cmd_compare(const CompareArgs& args) {
  CompareOptions options;
  if (!args.metrics.empty()) options.metrics = args.metrics;
  if (args.fail_pct >= 0) options.fail_on_regression_pct = args.fail_pct;
  if (args.threshold_pct >= 0) options.threshold_pct = args.threshold_pct;
  if (!args.normalize_by.empty()) {
    if (args.files.size() != 2)
      throw InputError("compare: --normalize-by compares two reports, each against its own " +
                       args.normalize_by);
    options.normalize_by = args.normalize_by;
  }
  Comparison comparison;
  if (args.files.size() == 1) {
    if (args.baseline.empty())
      throw InputError(
          "compare: one report needs --baseline BACKEND; two reports compare run against run");
    options.baseline_backend = args.baseline;
    comparison = compare_backends(read_csv(args.files[0]), options, read_samples(args.files[0]));
  } else if (args.files.size() == 2) {
    if (!args.baseline.empty())
      throw InputError("compare: --baseline compares backends inside one report; give one file");
    comparison = compare_reports(read_csv(args.files[0]), read_csv(args.files[1]), options,
                                 read_samples(args.files[0]), read_samples(args.files[1]));
  } else {
    throw InputError("compare: give one report (with --baseline) or two reports");
  }
  const CompareFormat format = args.markdown               ? CompareFormat::markdown
                               : args.format == "json"     ? CompareFormat::json
                               : args.format == "markdown" ? CompareFormat::markdown
                                                           : CompareFormat::text;
  print_comparison(comparison, std::cout, format);
  return comparison.regressions > 0 ? 1 : 0;
}

}  // namespace attnbench
