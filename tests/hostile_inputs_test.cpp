// Issue "Under abuse, fifth round", end to end: one case (or more) per class of what hostile and
// careless users did, each refused with exit 2 and a message that names what was wrong and where,
// with nothing written. The classes tested elsewhere, where their machinery is:
//   the tools' own inputs (model_table.py, harness_profile.py, ...)   tests/tools_abuse_test.py
//   the follows-inputs check at any sample count                       tests/assemble_test.cpp
//   a backend's child that calls setsid(), workers reaped at timeout tests/python_backend_test.cpp
//   Triton's interpreter refusing bf16                                 tests/triton_served_test.py
//   two workloads' ids compared pairwise, field by field               tests/kinds_test.cpp
#include "cli_support.hpp"
#include "write/csv.hpp"

#include <fstream>
#include <set>

namespace attnbench {
namespace {

namespace fs = std::filesystem;
using test::Cli;
using test::Result;
using test::run;

// A sweep that runs on the CPU in a moment; `sweep` holds the keys under `sweep:` (a dtype there
// replaces fp32), `measurement` more lines under `measurement:` (a max_time_s there replaces 0.05).
std::string sweep_of(const std::string& sweep, const std::string& measurement = "") {
  const bool own_time = measurement.find("max_time_s:") != std::string::npos;
  const bool own_dtype = sweep.find("dtype:") != std::string::npos;
  return "backends: [naive]\nmeasurement:\n  warmup_ms: 1\n  min_samples: 3\n  max_samples: 3\n"
         "  min_time_s: 0\n" +
         std::string(own_time ? "" : "  max_time_s: 0.05\n") + "  passes: [correctness, timing]\n" +
         measurement + "sweep:\n  device: cpu\n" + (own_dtype ? "" : "  dtype: fp32\n") + sweep;
}

struct BadSweep {
  const char* what;
  std::string sweep;  // under `sweep:` (its keys start on line 12)
  int line;           // the line the message names
  std::string key;
  std::string message;
  std::string measurement = "";  // lines under `measurement:`, before `sweep:`
};

void PrintTo(const BadSweep& bad, std::ostream* os) { *os << bad.what; }

// Fields accepted and not used; numbers past where the arithmetic stays finite; messages that
// named the wrong thing. Each value's neighbour inside its bound is run below.
const BadSweep kBadSweeps[] = {
    {"v_head_dim of the absorbed form",
     "  kind: mla\n  absorbed: true\n  heads: 2\n  seq_len: 1\n  seq_len_kv: 16\n"
     "  kv_lora_rank: 32\n  qk_rope_head_dim: 16\n  qk_nope_head_dim: 16\n  v_head_dim: 999\n",
     20, "sweep.v_head_dim", "v_head_dim does not apply to any point of this block"},
    {"kv_lora_rank of a prefill",
     "  kind: mla\n  heads: 2\n  seq_len: 16\n  qk_rope_head_dim: 16\n  qk_nope_head_dim: 16\n"
     "  v_head_dim: 16\n  kv_lora_rank: 512\n",
     18, "sweep.kv_lora_rank", "kv_lora_rank does not apply to any point of this block"},
    {"an MLA width near 2^63",
     "  kind: mla\n  heads: 2\n  seq_len: 16\n  qk_rope_head_dim: 16\n"
     "  qk_nope_head_dim: 9223372036854775800\n  v_head_dim: 16\n",
     16, "sweep.qk_nope_head_dim", "qk_nope_head_dim is at most 65536"},
    {"a page size of a contiguous cache", "  seq_len: 16\n  page_size: 16\n", 13, "sweep.page_size",
     "page_size applies to a paged cache; add kv_layout: paged"},
    {"scale 1e300", "  seq_len: 16\n  scale: 1e300\n", 13, "sweep.scale",
     "scale is from 0 to 1e+30"},
    {"scale 1e39", "  seq_len: 16\n  dtype: bf16\n  scale: 1e39\n", 13, "sweep.scale",
     "scale is from 0 to 1e+30"},
    {"scale 1e-400", "  seq_len: 16\n  scale: 1e-400\n", 13, "sweep.scale",
     "'1e-400' is outside the range of a double"},
    {"scale 1e400", "  seq_len: 16\n  scale: 1e400\n", 13, "sweep.scale",
     "'1e400' is outside the range of a double"},
    {"head_dim past a head's features", "  seq_len: 16\n  head_dim: 65537\n", 13, "sweep.head_dim",
     "head_dim is from 1 to 65536"},
    {"heads of a layer", "  seq_len: 16\n  heads: 1048577\n", 13, "sweep.heads",
     "heads is from 1 to 1048576"},
    {"a sequence past int32 tokens", "  seq_len: 2147483648\n", 12, "sweep.seq_len",
     "seq_len is from 1 to 2147483647"},
    {"a sequence at int32 tokens' edge", "  seq_len: 2147483647\n  head_dim: 0\n", 13, "sweep.head_dim",
     "must be at least 1, got 0"},
    {"a cache past int32 tokens", "  seq_len: 1\n  seq_len_kv: 2147483648\n", 13, "sweep.seq_len_kv",
     "seq_len_kv is from 1 to 2147483647"},
    {"kv_heads of a layer", "  seq_len: 16\n  heads: 1048576\n  kv_heads: 1048577\n", 14,
     "sweep.kv_heads", "kv_heads is from 1 to 1048576"},
    {"a mix part counted 2^40", "  batch: 2\n  seq_lens: \"1099511627776*32\"\n", 13,
     "sweep.seq_lens", "a part's count of sequences is a whole number from 1 to"},
    {"a mix part whose list does not fit its count", "  batch: 5\n  seq_lens: \"2*4,8,16 + 3*8\"\n",
     13, "sweep.seq_lens", "part 1 of the mix (2 of the batch's 5 sequences)"},
    {"timeout_s past a week", "  seq_len: 16\n", 9, "measurement.timeout_s",
     "timeout_s is at most 604800 s (a week), not 1e+20", "  timeout_s: 1e20\n"},
    {"max_time_s past a week", "  seq_len: 16\n", 8, "measurement.max_time_s",
     "max_time_s is at most 604800 s (a week)", "  max_time_s: 604801\n"},
};

class BadSweepTest : public Cli, public ::testing::WithParamInterface<BadSweep> {};

TEST_P(BadSweepTest, IsRefusedAtItsKeyBeforeAnythingRuns) {
  const BadSweep& bad = GetParam();
  const std::string config = write("bad.yaml", sweep_of(bad.sweep, bad.measurement));
  for (const std::string mode : {std::string("--dry-run"), "-o " + path("out.csv")}) {
    const Result r = run("run " + config + " " + mode);
    EXPECT_EQ(r.code, 2) << mode << ": " << r.output;
    const std::string at = config + ":" + std::to_string(bad.line) + ":";
    EXPECT_NE(r.output.find(at), std::string::npos) << mode << ": wants " << at << "\n" << r.output;
    EXPECT_NE(r.output.find("key '" + bad.key + "'"), std::string::npos) << mode << r.output;
    EXPECT_NE(r.output.find(bad.message), std::string::npos) << mode << ": " << r.output;
    EXPECT_FALSE(fs::exists(path("out.csv")));
  }
}

INSTANTIATE_TEST_SUITE_P(All, BadSweepTest, ::testing::ValuesIn(kBadSweeps));

// The neighbours inside each bound: accepted (dry run: only the sweep is checked).
TEST_F(Cli, HostileInputsNeighboursInsideTheirBoundsAreAccepted) {
  for (const std::string ok : {
           "  seq_len: 16\n  scale: 1e30\n",
           "  seq_len: 16\n  head_dim: 65536\n",
           "  seq_len: 16\n  heads: 1048576\n  kv_heads: 1\n",
           "  batch: 5\n  seq_lens: \"2*4,8 + 3*8\"\n",
           "  seq_len: 16\n  kv_layout: paged\n  page_size: 16\n",
           "  kind: mla\n  absorbed: [true, false]\n  heads: 2\n  seq_len: 1\n  seq_len_kv: 16\n"
           "  kv_lora_rank: 32\n  qk_rope_head_dim: 16\n  qk_nope_head_dim: 16\n  v_head_dim: 16\n",
       }) {
    const Result r = run("run " + write("ok.yaml", sweep_of(ok)) + " --dry-run");
    EXPECT_EQ(r.code, 0) << ok << r.output;
  }
  const Result week =
      run("run " + write("w.yaml", sweep_of("  seq_len: 16\n", "  timeout_s: 604800\n")) +
          " --dry-run");
  EXPECT_EQ(week.code, 0) << week.output;
}

// Two workloads, two ids: the mix 2*32 + 2*1 and the list 2,32,2,1 draw 66 and 37 query tokens.
TEST_F(Cli, AMixAndAListOfTheSameNumbersAreTwoPoints) {
  const std::string config =
      write("m.yaml", sweep_of("  batch: 4\n  seq_lens: [\"2*32 + 2*1\", \"2,32,2,1\"]\n"));
  const Result r = run("run " + config + " --dry-run");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("qlens-2x32-2x1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("qlens-2-32-2-1"), std::string::npos) << r.output;
}

// Command-line numbers: an empty or a 0 one is refused, never read as "not given".
TEST_F(Cli, RunFlagsTakeOnlyWhatTheyCanUse) {
  const std::string config = write("c.yaml", sweep_of("  seq_len: 16\n"));
  struct Flag {
    std::string args, message;
  };
  for (const Flag& f : std::vector<Flag>{
           {"--tp 0", "--tp: a whole number of at least 1, not '0'"},
           {"--tp ''", "--tp: a whole number of at least 1, not ''"},
           {"--tp 2.5", "--tp: a whole number of at least 1, not '2.5'"},
           {"--repetitions 0", "--repetitions: a whole number of at least 1, not '0'"},
           {"--repetitions 99999999999", "a whole number of at least 1, not '99999999999'"},
           {"--timeout-s 0", "--timeout-s: seconds above 0, at most 604800 (a week), not '0'"},
           {"--timeout-s -3", "seconds above 0"},
           {"--timeout-s 1e9", "seconds above 0, at most 604800 (a week), not '1e9'"},
           {"--timeout-s nan", "not 'nan'"},
           {"--devices ''", "--devices: a value, not ''"},
           {"--shard ''", "--shard: a value, not ''"},
       }) {
    const Result r = run("run " + config + " " + f.args + " -o " + path("out.csv"));
    EXPECT_EQ(r.code, 2) << f.args << ": " << r.output;
    EXPECT_NE(r.output.find(f.message), std::string::npos) << f.args << ": " << r.output;
    EXPECT_EQ(r.output.find("1797"), std::string::npos) << "a double's range: " << r.output;
    EXPECT_FALSE(fs::exists(path("out.csv"))) << f.args;
  }
  EXPECT_EQ(run("run " + config + " --timeout-s 604800 --tp 1 --dry-run").code, 0);
}

// A deadline the environment sets wrong refuses a run that compiles a source backend, at the
// backend's line, before anything is compiled or measured.
TEST_F(Cli, ACompileDeadlineFromTheEnvironmentIsChecked) {
  const std::string source =
      write("mine.cpp", "// never compiled: the deadline is refused first\n");
  std::string text = sweep_of("  seq_len: 16\n");
  text.replace(0, text.find('\n'), "backends: [naive, {source: " + source + "}]");
  const std::string config = write("s.yaml", text);
  for (const std::string bad : {"abc", "0", "-5", "1e9", "12s"}) {
    const Result r =
        run("run " + config + " -o " + path("out.csv"),
            "ATTNBENCH_CACHE_DIR=" + path("cache") + " ATTNBENCH_COMPILE_TIMEOUT_S='" + bad + "'");
    EXPECT_EQ(r.code, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find(config + ":1:"), std::string::npos) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("$ATTNBENCH_COMPILE_TIMEOUT_S is '" + bad +
                            "'; give the seconds a compile may take, from 1 to 86400"),
              std::string::npos)
        << bad << ": " << r.output;
    EXPECT_FALSE(fs::exists(path("out.csv"))) << bad;
    EXPECT_FALSE(fs::exists(path("cache"))) << bad << ": compiled before refusing";
  }
}

// A report edited by hand: a cell no run writes is refused where it stands, by every reader.
TEST_F(Cli, AHandEditedCellOutsideItsFieldsBoundsIsRefusedByEveryReader) {
  const std::string config = write("c.yaml", sweep_of("  seq_len: 16\n"));
  ASSERT_EQ(run("run " + config + " --no-summary -o " + path("a.csv")).code, 0);
  const CsvTable t = read_csv(path("a.csv"));
  struct Edit {
    std::string column, value, message;
  };
  for (const Edit& e : std::vector<Edit>{
           {"scale", "-1", "scale is from 0 to 1e+30"},
           {"head_dim_v", "0", "head_dim_v is from 1 to 65536"},
           {"heads", "0", "heads is from 1 to 1048576"},
       }) {
    CsvTable edited = t;
    edited.rows[0][static_cast<size_t>(edited.column(e.column))] = e.value;
    {
      CsvWriter w(path("e.csv"), edited.header);
      for (const auto& row : edited.rows) w.write(row);
    }
    const std::string at = path("e.csv") + ":2: column '" + e.column + "' holds '" + e.value + "'";
    for (const std::string command :
         {"summary " + path("e.csv"), "compare " + path("a.csv") + " " + path("e.csv"),
          "run " + config + " --resume --no-summary -o " + path("e.csv")}) {
      const Result r = run(command);
      EXPECT_EQ(r.code, 2) << command << ": " << r.output;
      EXPECT_NE(r.output.find(at), std::string::npos) << command << ": wants " << at << "\n"
                                                      << r.output;
      EXPECT_NE(r.output.find(e.message), std::string::npos) << command << ": " << r.output;
    }
  }
}

}  // namespace
}  // namespace attnbench
