#include "analysis/compare.hpp"
#include "base/errors.hpp"
#include "cli/commands.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

namespace attnbench {

namespace {

struct CompareArgs {
  std::vector<std::string> files;
  std::string baseline;
  std::vector<std::string> metrics;
  bool markdown = false;        // the same as format "markdown"
  std::string format = "text";  // text | markdown | json
  double fail_pct = -1;         // -1: not given
  double threshold_pct = -1;    // -1: each metric's own
  std::string normalize_by;     // two reports: every row over this backend's in the same report
  bool normalize_clock = false;
};

// A report's samples file, refused when it is not that report's (a stale side file).
SampleSets samples_of(const std::string& report) {
  SampleSets samples = read_samples(report);
  check_samples(read_csv(report), samples);
  return samples;
}

// 0, or 1 when --fail-on-regression found a regression; 2 (InputError) when the reports are
// broken, their side files are not theirs, or nothing joined.
int cmd_compare(const CompareArgs& args) {
  CompareOptions options;
  if (!args.metrics.empty()) options.metrics = args.metrics;
  if (args.fail_pct >= 0) options.fail_on_regression_pct = args.fail_pct;
  if (args.threshold_pct >= 0) options.threshold_pct = args.threshold_pct;
  options.normalize_clock = args.normalize_clock;
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
    comparison = compare_backends(read_csv(args.files[0]), options, samples_of(args.files[0]));
  } else if (args.files.size() == 2) {
    if (!args.baseline.empty())
      throw InputError("compare: --baseline compares backends inside one report; give one file");
    comparison = compare_reports(read_csv(args.files[0]), read_csv(args.files[1]), options,
                                 samples_of(args.files[0]), samples_of(args.files[1]));
  } else {
    throw InputError("compare: give one report (with --baseline) or two reports");
  }
  const CompareFormat format = args.markdown               ? CompareFormat::markdown
                               : args.format == "json"     ? CompareFormat::json
                               : args.format == "markdown" ? CompareFormat::markdown
                                                           : CompareFormat::text;
  require_joined(comparison, "compare");
  print_comparison(comparison, std::cout, format);
  return comparison.regressions > 0 ? 1 : 0;
}

}  // namespace

Subcommand add_compare(CLI::App& app) {
  auto a = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand("compare", "Compare two reports, or backends inside one report");
  cmd->add_option("reports", a->files, "base.csv new.csv, or one report with --baseline")
      ->required();
  cmd->add_option("--baseline", a->baseline, "Backend to compare the others against (one report)");
  cmd->add_option("--metric", a->metrics, "Columns to compare (default time_ms_median)")
      ->delimiter(',');
  cmd->add_option("--output-format", a->format, "text, markdown or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  cmd->add_flag("--markdown", a->markdown, "Markdown tables (--output-format markdown)");
  cmd->add_option("--fail-on-regression", a->fail_pct,
                  "Exit 1 if a row is `worse` (its whole interval beyond the threshold; any "
                  "change for counts) and by more than PCT percent")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--threshold", a->threshold_pct,
                  "Smallest change in percent that counts for time metrics (default 5; host time "
                  "35): inside it `same`, across it `unsure`")
      ->check(CLI::NonNegativeNumber);

  cmd->add_option("--normalize-by", a->normalize_by,
                  "Two reports: divide each row's times by this backend's at the same point, "
                  "mode and repetition of its own report first, so drift that hits a whole "
                  "run cancels");
  cmd->add_flag("--normalize-clock", a->normalize_clock,
                "Scale each row's times to the base row's SM clock (sm_clock_mhz_median) before "
                "judging: the change at one clock. Without it, rows whose clocks are over 3% "
                "apart are `unsure`");
  return {cmd, [a] { return cmd_compare(*a); }};
}

}  // namespace attnbench
