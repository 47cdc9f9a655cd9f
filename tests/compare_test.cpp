#include "compare.hpp"
#include "errors.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace attnbench {
namespace {

Row timed(const std::string& backend, int seq_len, double ms, double noise, Status status = Status::ok) {
  Row r;
  r.backend = backend;
  r.problem.seq_len = seq_len;
  r.point_id = "s" + std::to_string(seq_len);
  r.timing_mode = "cold";
  r.status = status;
  if (status == Status::ok) {
    r.time_ms_median = ms;
    r.time_rel_noise = noise;
    r.kernels_per_call = backend == "naive" ? 6 : 1;
  }
  return r;
}

CsvTable table(const std::vector<Row>& rows, const std::string& path) {
  std::string text;
  auto line = [&](const std::vector<std::string>& fields) {
    for (size_t i = 0; i < fields.size(); ++i) text += (i ? "," : "") + csv_escape(fields[i]);
    text += "\n";
  };
  line(row_header());
  for (const auto& r : rows) line(row_fields(r));
  return parse_csv(text, path);
}

TEST(Compare, RunAgainstRunWithNoiseAwareVerdicts) {
  const CsvTable base = table({timed("flash", 512, 1.00, 0.01), timed("flash", 1024, 2.00, 0.01),
                               timed("naive", 512, 5.00, 0.01), timed("cudnn", 512, 1.0, 0.01)},
                              "base.csv");
  const CsvTable next = table({timed("flash", 512, 1.015, 0.01), timed("flash", 1024, 2.60, 0.01),
                               timed("naive", 512, 4.00, 0.01), timed("cudnn", 512, 0, 0, Status::error),
                               timed("math", 512, 9.0, 0.01)},
                              "new.csv");
  CompareOptions options;
  options.fail_on_regression_pct = 10;
  std::ostringstream out;
  const CompareResult result = compare_reports(base, next, options, out);
  const std::string text = out.str();
  EXPECT_EQ(result.compared, 3);
  EXPECT_EQ(result.regressions, 1) << text;  // flash at 1024: 30% slower
  EXPECT_NE(text.find("joined 4, only in base 0, only in new 1"), std::string::npos) << text;
  EXPECT_NE(text.find("within noise"), std::string::npos) << text;  // 1.5% inside the 2% band
  EXPECT_NE(text.find("worse"), std::string::npos) << text;
  EXPECT_NE(text.find("better"), std::string::npos) << text;
  EXPECT_NE(text.find("n/a: ok -> error"), std::string::npos) << text;
  // flash: geometric mean of 1.015 and 1.3.
  EXPECT_NE(text.find("1.149"), std::string::npos) << text;
}

TEST(Compare, DeterministicCountsAreSameOrDifferent) {
  const CsvTable base = table({timed("naive", 512, 5, 0.01)}, "a.csv");
  CompareOptions options;
  options.metrics = {"kernels_per_call"};
  std::ostringstream out;
  compare_reports(base, base, options, out);
  EXPECT_NE(out.str().find("same"), std::string::npos) << out.str();
}

TEST(Compare, BackendsInsideOneReportAgainstABaseline) {
  const CsvTable report = table({timed("inplace", 512, 4.0, 0.01), timed("naive", 512, 5.0, 0.01),
                                 timed("flash", 512, 1.0, 0.01)},
                                "r.csv");
  CompareOptions options;
  options.baseline_backend = "inplace";
  options.markdown = true;
  std::ostringstream out;
  const CompareResult result = compare_backends(report, options, out);
  EXPECT_EQ(result.compared, 2);
  const std::string text = out.str();
  EXPECT_NE(text.find("| s512"), std::string::npos) << text;
  EXPECT_NE(text.find("1.250"), std::string::npos) << text;  // naive / inplace
  EXPECT_NE(text.find("0.250"), std::string::npos) << text;  // flash / inplace
}

TEST(Compare, RefusesOtherSchemasAndMissingColumns) {
  CsvTable old = table({timed("flash", 512, 1, 0.01)}, "old.csv");
  old.rows[0][0] = "0";
  std::ostringstream out;
  EXPECT_THROW(compare_reports(old, old, {}, out), InputError);
  const CsvTable t = table({timed("flash", 512, 1, 0.01)}, "t.csv");
  CompareOptions options;
  options.metrics = {"no_such_column"};
  EXPECT_THROW(compare_reports(t, t, options, out), InputError);
  options = {};
  options.baseline_backend = "cudnn";
  EXPECT_THROW(compare_backends(t, options, out), InputError);
}

}  // namespace
}  // namespace attnbench
