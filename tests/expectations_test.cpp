// Predictions: parsing (and its located errors), judging rows, the summary's order.
#include "records/expectations.hpp"
#include "analysis/summary.hpp"
#include "base/errors.hpp"
#include "config/config.hpp"
#include "records/row_columns.hpp"
#include "write/csv.hpp"
#include "write/schema.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

namespace attnbench {
namespace {

const std::string kSweep = R"(sweep:
  seq_len: [512, 1024]
  device: cuda
)";

Expectations parse(const std::string& expect_block, const std::string& backends = "") {
  return read_expectations(parse_config(backends + kSweep + expect_block, "e.yaml"));
}

Row row(const std::string& backend, int64_t seq_len = 512) {
  Row r;
  r.backend = backend;
  r.point_id = "p" + std::to_string(seq_len);
  r.problem.seq_len = r.problem.seq_len_kv = seq_len;
  r.problem.device = Device::cuda;
  r.timing_mode = TimingMode::cold;
  return r;
}

PeerRow peers(const std::map<std::string, Row>& rows) {
  return [&rows](const std::string& b) -> const Row* {
    auto it = rows.find(b);
    return it == rows.end() ? nullptr : &it->second;
  };
}

const PeerRow kNoPeers = [](const std::string&) -> const Row* { return nullptr; };

TEST(Expectations, ParsesValuesRangesRelationsOpsAndWhere) {
  const Expectations e = parse(R"(expect:
  naive:
    - aten_ops: [aten::matmul, mul]
    - where: {seq_len: [1024], timing_mode: cold, causal: false}
      kernels_per_call: 5
      occupancy_pct: {min: 10, max: 16}
  cudnn:
    cpu_us_median: {more_than: flash}
    faster_than: [naive, math]
)");
  ASSERT_EQ(e.items.size(), 3u);
  EXPECT_EQ(e.items[0].backend, "naive");
  EXPECT_EQ(*e.items[0].predictions[0].ops, (std::vector<std::string>{"matmul", "mul"}));
  ASSERT_EQ(e.items[1].where.size(), 3u);
  EXPECT_EQ(e.items[1].where[0].field, "seq_len");
  EXPECT_EQ(e.items[1].where[0].values, std::vector<std::string>{"1024"});
  EXPECT_EQ(e.items[1].where[2].values, std::vector<std::string>{"false"});
  EXPECT_EQ(*e.items[1].predictions[0].min, 5);
  EXPECT_EQ(*e.items[1].predictions[0].max, 5);
  EXPECT_EQ(*e.items[1].predictions[1].max, 16);
  EXPECT_EQ(e.items[2].predictions[0].more_than, std::vector<std::string>{"flash"});
  EXPECT_EQ(e.items[2].predictions[1].column, "time_ms_median");
  EXPECT_EQ(e.items[2].predictions[1].less_than, (std::vector<std::string>{"naive", "math"}));
  EXPECT_EQ(peers_of(e, "cudnn"), (std::set<std::string>{"flash", "math", "naive"}));
  EXPECT_TRUE(peers_of(e, "naive").empty());
  // Every backend named, with where: for the run to check against the plugins.
  std::vector<std::string> named;
  for (const auto& ref : e.references) named.push_back(ref.backend);
  EXPECT_EQ(named, (std::vector<std::string>{"naive", "cudnn", "flash", "naive", "math"}));
  EXPECT_EQ(e.references[2].line, 11);
}

struct BadExpect {
  const char* what;
  std::string block;
  int line;
  std::string key;
  std::string message;
  std::string backends = "";
};

const BadExpect kBad[] = {
    {"unknown column", "expect:\n  naive:\n    kernels: 5\n", 6, "expect.naive.kernels",
     "unknown key (did you mean 'kernels_per_call'?)"},
    {"text for a number", "expect:\n  naive:\n    kernels_per_call: five\n", 6,
     "expect.naive.kernels_per_call", "expected a number, got 'five'"},
    {"range upside down", "expect:\n  naive:\n    tflops: {min: 5, max: 1}\n", 6,
     "expect.naive.tflops.max", "max is below min"},
    {"unknown range key", "expect:\n  naive:\n    tflops: {minimum: 5}\n", 6,
     "expect.naive.tflops.minimum", "unknown key"},
    {"range as a list", "expect:\n  naive:\n    tflops: [1, 2]\n", 6, "expect.naive.tflops",
     "expected a value, or a mapping"},
    {"backend not in the config", "expect:\n  flsh:\n    tflops: 1\n", 5, "expect.flsh",
     "backend 'flsh' is not in this config's backends", "backends: [naive, flash]\n"},
    {"relation to a backend not in the config", "expect:\n  naive:\n    faster_than: [mth]\n", 6,
     "expect.naive.faster_than", "backend 'mth' is not in this config's backends",
     "backends: [naive, math]\n"},
    {"relation to itself", "expect:\n  naive:\n    faster_than: [math, naive]\n", 6,
     "expect.naive.faster_than", "compares 'naive' with itself", "backends: [naive, math]\n"},
    {"range relation to itself", "expect:\n  math:\n    cpu_us_median: {more_than: [math]}\n", 6,
     "expect.math.cpu_us_median.more_than", "compares 'math' with itself",
     "backends: [naive, math]\n"},
    {"range relation to itself, the other side",
     "expect:\n  math:\n    tflops: {less_than: [math]}\n", 6,
     "expect.math.tflops.less_than", "compares 'math' with itself", "backends: [naive, math]\n"},
    {"slower than itself", "expect:\n  naive:\n    slower_than: [naive]\n", 6,
     "expect.naive.slower_than", "compares 'naive' with itself", "backends: [naive, math]\n"},
    {"backend twice in a relation", "expect:\n  naive:\n    slower_than: [math, math]\n", 6,
     "expect.naive.slower_than", "names 'math' twice", "backends: [naive, math]\n"},
    {"backend twice in a range relation",
     "expect:\n  naive:\n    tflops: {less_than: [math, flash, math]}\n", 6,
     "expect.naive.tflops.less_than", "names 'math' twice", "backends: [naive, math, flash]\n"},
    {"relation stated twice in one entry",
     "expect:\n  naive:\n    faster_than: [math]\n    time_ms_median: {less_than: math}\n", 7,
     "expect.naive.time_ms_median", "repeats a relation to 'math'", "backends: [naive, math]\n"},
    {"faster and slower than one backend",
     "expect:\n  naive:\n    faster_than: [math]\n    slower_than: [flash, math]\n", 7,
     "expect.naive.slower_than", "cannot be both below and above 'math'",
     "backends: [naive, math, flash]\n"},
    {"slower, then faster than one backend",
     "expect:\n  naive:\n    slower_than: [math]\n    faster_than: [flash, math]\n", 7,
     "expect.naive.faster_than", "cannot be both below and above 'math'",
     "backends: [naive, math, flash]\n"},
    {"above, then below in one range",
     "expect:\n  naive:\n    tflops: {more_than: math, less_than: math}\n", 6,
     "expect.naive.tflops", "cannot be both below and above 'math'", "backends: [naive, math]\n"},
    {"below and above in one range",
     "expect:\n  naive:\n    tflops: {less_than: math, more_than: math}\n", 6,
     "expect.naive.tflops", "cannot be both below and above 'math'", "backends: [naive, math]\n"},
    {"unknown where field", "expect:\n  naive:\n    where: {seqlen: 1}\n    tflops: 1\n", 6,
     "expect.naive.where.seqlen", "did you mean 'seq_len'?"},
    {"bad where value", "expect:\n  naive:\n    where: {dtype: bf17}\n    tflops: 1\n", 6,
     "expect.naive.where.dtype", "unknown dtype 'bf17'"},
    {"only where", "expect:\n  naive:\n    where: {seq_len: 512}\n", 6, "expect.naive",
     "predicts nothing"},
    {"empty backend", "expect:\n  naive:\n", 5, "expect.naive", "has no value"},
    {"backend twice", "expect:\n  naive: {tflops: 1}\n  naive: {tflops: 2}\n", 6, "expect.naive",
     "appears twice"},
    {"not a mapping", "expect: [naive]\n", 4, "expect", "expected a mapping of backend names"},
};

void PrintTo(const BadExpect& bad, std::ostream* os) { *os << bad.what; }

class BadExpectTest : public ::testing::TestWithParam<BadExpect> {};

TEST_P(BadExpectTest, IsALocatedConfigError) {
  const BadExpect& bad = GetParam();
  try {
    parse(bad.block, bad.backends);
    FAIL() << bad.what << ": parsed";
  } catch (const ConfigError& e) {
    const int offset = bad.backends.empty() ? 0 : 1;
    EXPECT_EQ(e.line(), bad.line + offset) << e.what();
    EXPECT_EQ(e.key(), bad.key) << e.what();
    EXPECT_NE(std::string(e.what()).find(bad.message), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(All, BadExpectTest, ::testing::ValuesIn(kBad));

TEST(Expectations, RowsWithoutPredictionsStayEmpty) {
  const Expectations e = parse("expect:\n  naive:\n    where: {seq_len: 1024}\n    tflops: 1\n");
  EXPECT_EQ(judge_row(row("math"), e, kNoPeers), "");
  EXPECT_EQ(judge_row(row("naive", 512), e, kNoPeers), "");  // where: seq_len 1024 only
  EXPECT_NE(judge_row(row("naive", 1024), e, kNoPeers), "");
}

TEST(Expectations, MetWhenEveryPredictionHolds) {
  const Expectations e = parse(R"(expect:
  naive:
    kernels_per_call: 5
    memcpy_per_call: {min: 1}
    occupancy_pct: {max: 16}
    aten_ops: [matmul, mul]
)");
  Row r = row("naive");
  r.kernels_per_call = 5.0000000001, r.memcpy_per_call = 3, r.occupancy_pct = 16;
  r.aten_ops = "matmul mul", r.aten_ops_per_call = 2;
  EXPECT_EQ(judge_row(r, e, kNoPeers), "met");
}

TEST(Expectations, MissedListsEveryMissAsPredictedVersusSeen) {
  const Expectations e = parse(R"(expect:
  naive:
    kernels_per_call: 5
    memcpy_per_call: {min: 1, max: 2}
    aten_ops: [matmul, mul]
    tflops: 3
)");
  Row r = row("naive");
  r.kernels_per_call = 6, r.memcpy_per_call = 0;
  r.aten_ops = "matmul mul softmax", r.aten_ops_per_call = 3;
  EXPECT_EQ(judge_row(r, e, kNoPeers),
            "missed: kernels_per_call predicted 5, seen 6; memcpy_per_call predicted 1..2, seen "
            "0; aten_ops predicted 'matmul mul', seen 'matmul mul softmax'; tflops predicted 3, "
            "seen not measured");
  EXPECT_TRUE(is_missed(judge_row(r, e, kNoPeers)));
  r.status = Status::unsupported;
  EXPECT_NE(judge_row(r, e, kNoPeers).find("tflops predicted 3, seen no value (unsupported)"),
            std::string::npos);
}

TEST(Expectations, RelationsCompareTheSameRowOfAnotherBackend) {
  const Expectations e = parse(R"(expect:
  cudnn:
    cpu_us_median: {more_than: flash}
    faster_than: [math]
)");
  std::map<std::string, Row> others{{"flash", row("flash")}, {"math", row("math")}};
  others["flash"].cpu_us_median = 20;
  others["math"].time_ms_median = 1.0;
  Row r = row("cudnn");
  r.cpu_us_median = 15, r.time_ms_median = 0.5;
  EXPECT_EQ(judge_row(r, e, peers(others)),
            "missed: cpu_us_median predicted > flash's 20, seen 15");
  r.cpu_us_median = 25;
  EXPECT_EQ(judge_row(r, e, peers(others)), "met");
  r.time_ms_median = 1.0;  // equal is not faster
  EXPECT_EQ(judge_row(r, e, peers(others)), "missed: time_ms_median predicted < math's 1, seen 1");
  others.erase("math");
  EXPECT_EQ(judge_row(r, e, peers(others)),
            "missed: time_ms_median predicted < math's, but math has no row here");
  others["math"] = row("math");
  others["math"].status = Status::oom;
  EXPECT_EQ(judge_row(r, e, peers(others)),
            "missed: time_ms_median predicted < math's, but math has no value (oom)");
}

// The neighbours of the refused repeats: one backend in two columns, or below one backend and
// above another in one column, or one relation in two entries with their own `where`, all hold.
TEST(Expectations, ARelationRepeatsOnlyWithinOneColumnOfOneEntry) {
  const Expectations e = parse(R"(expect:
  naive:
    - faster_than: [math]
      cpu_us_median: {less_than: math, more_than: flash}
      time_ms_median: {more_than: flash}
    - where: {seq_len: [512]}
      faster_than: [math]
)",
                               "backends: [naive, math, flash]\n");
  ASSERT_EQ(e.items.size(), 2u);
  ASSERT_EQ(e.items[0].predictions.size(), 3u);
  EXPECT_EQ(e.items[0].predictions[1].less_than, std::vector<std::string>{"math"});
  EXPECT_EQ(e.items[0].predictions[1].more_than, std::vector<std::string>{"flash"});
  EXPECT_EQ(e.items[0].predictions[2].more_than, std::vector<std::string>{"flash"});
  EXPECT_EQ(e.items[1].predictions[0].less_than, std::vector<std::string>{"math"});
}

// Under --shard a relation to a backend another shard measures is not a miss: it is unjudged
// (merge judges it); a miss of its own still counts, and a peer absent from the whole sweep is
// still a miss.
TEST(Expectations, ARelationToAnotherShardsRowIsUnjudged) {
  const Expectations e = parse(R"(expect:
  cudnn:
    cpu_us_median: {more_than: flash}
    faster_than: [math]
)");
  Row r = row("cudnn");
  r.cpu_us_median = 25, r.time_ms_median = 0.5;
  std::map<std::string, Row> others;
  EXPECT_EQ(judge_row(r, e, peers(others), {"flash", "math"}),
            "unjudged: flash math measured by another shard here (attnbench merge judges it)");
  EXPECT_FALSE(is_missed(judge_row(r, e, peers(others), {"flash", "math"})));
  others["flash"] = row("flash");
  others["flash"].cpu_us_median = 30;
  EXPECT_EQ(judge_row(r, e, peers(others), {"math"}),
            "missed: cpu_us_median predicted > flash's 30, seen 25");
  others["flash"].cpu_us_median = 20;
  EXPECT_EQ(judge_row(r, e, peers(others), {"flash"}),
            "missed: time_ms_median predicted < math's, but math has no row here");
}

TEST(Expectations, EveryNumericColumnIsInTheCsv) {
  const auto header = row_header();
  for (const auto& c : numeric_row_columns())
    EXPECT_NE(std::find(header.begin(), header.end(), c), header.end()) << c;
  EXPECT_NE(std::find(header.begin(), header.end(), "expectation"), header.end());
}

TEST(Expectations, SummaryListsMissesBeforeTheTable) {
  std::string csv = "point_id,backend,timing_mode,status,expectation\n";
  csv += "p1,naive,cold,ok,met\n";
  csv += "p1,cudnn,cold,ok,\"missed: cpu_us_median predicted > flash's 20, seen 15\"\n";
  csv += "p1,cudnn,batch,ok,\"missed: cpu_us_median predicted > flash's 20, seen 15\"\n";
  csv += "p1,flash,cold,ok,\n";
  std::ostringstream out;
  print_summary(typed_rows(parse_csv(csv, "r.csv")), out);
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("predictions: 2 row(s) missed, 1 met\n", 0), 0u) << text;
  const auto miss = text.find("MISSED cudnn @ p1 [cold]: cpu_us_median predicted > flash's 20");
  EXPECT_NE(miss, std::string::npos) << text;
  EXPECT_EQ(text.find("MISSED cudnn @ p1 [batch]"), std::string::npos) << "one line per miss";
  EXPECT_LT(miss, text.find("point ")) << text;
}

}  // namespace
}  // namespace attnbench
