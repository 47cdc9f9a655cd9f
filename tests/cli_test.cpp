// The attnbench executable end to end: exit codes, messages, files written or not.
#include "base/names.hpp"
#include "cli_support.hpp"
#include "write/csv.hpp"
#include "write/schema.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

namespace attnbench {
namespace {

namespace fs = std::filesystem;
using test::Cli;
using test::keys;
using test::plugin_folder;
using test::Result;
using test::rows_of;
using test::run;
using test::small_sweep;

constexpr const char* kTiny = R"(measurement:
  warmup_ms: 1
  min_samples: 3
  max_samples: 10
  min_time_s: 0
  max_time_s: 0.05
  cpu_pass_calls: 5
  kernel_pass_iterations: 2
sweep:
  batch: 1
  heads: 2
  seq_len: 64
  head_dim: 32
  dtype: fp32
  device: auto
)";

TEST_F(Cli, RunWritesOneRowPerBackendAndPrintsTheSummary) {
  const std::string config = write("tiny.yaml", kTiny);
  const Result r = run("run " + config + " -o " + path("out/tiny.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("wrote "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("backend"), std::string::npos) << r.output;  // the summary's header
  const CsvTable t = read_csv(path("out/tiny.csv"));
  // Every bundled backend (ATTNBENCH_BUNDLED), the CUDA-only ones unsupported.
  ASSERT_EQ(t.rows.size(), split(ATTNBENCH_BUNDLED, ',').size());
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const std::string& backend = t.at(i, "backend");
    const std::string& status = t.at(i, "status");
    if (backend == "naive" || backend == "inplace" || backend == "math")
      EXPECT_EQ(status, "ok") << backend << ": " << t.at(i, "reason");
    else if (t.at(i, "device") == "cpu")
      EXPECT_EQ(status, "unsupported") << backend;
    if (status == "unsupported") EXPECT_FALSE(t.at(i, "reason").empty()) << backend;
  }
  EXPECT_TRUE(fs::exists(path("out/tiny.kernels.csv")));
}

TEST_F(Cli, BrokenConfigIsLocatedExitsTwoAndWritesNothing) {
  const std::string config = write("broken.yaml", "sweep:\n  seq_len: 64\n  batch: -1\n");
  const Result r = run("run " + config + " -o " + path("never.csv"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(config + ":3:10: key 'sweep.batch': must be at least 1"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(path("never.csv")));
}

TEST_F(Cli, PredictionsAreJudgedPerRowAndCheckMakesAMissExitOne) {
  const std::string config = write("e.yaml", std::string(kTiny) + R"(expect:
  naive:
    aten_ops_per_call: 99
  math:
    aten_ops: [scaled_dot_product_attention]
  inplace:
    cpu_us_median: {more_than: math}
)");
  Result r = run("run " + config + " --backends inplace,math,naive -o " + path("e.csv"));
  ASSERT_EQ(r.code, 0) << r.output;  // a miss alone does not fail a run...
  EXPECT_NE(r.output.find("row(s) missed a prediction"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("MISSED naive @ "), std::string::npos) << r.output;
  CsvTable t = read_csv(path("e.csv"));
  ASSERT_EQ(t.rows.size(), 3u);
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const std::string& b = t.at(i, "backend");
    const std::string& e = t.at(i, "expectation");
    if (b == "naive")
      EXPECT_EQ(e, "missed: aten_ops_per_call predicted 99, seen " + t.at(i, "aten_ops_per_call"));
    if (b == "math") EXPECT_EQ(e, "met");
    // inplace was measured first and waited for math's row: judged against it, never "no row".
    if (b == "inplace")
      EXPECT_TRUE(e == "met" || e.find("predicted > math's ") != std::string::npos) << e;
  }
  r = run("run " + config + " --backends inplace,math,naive --check --force -o " + path("e.csv"));
  EXPECT_EQ(r.code, 1) << r.output;  // ...--check makes it one
  EXPECT_EQ(read_csv(path("e.csv")).rows.size(), 3u) << "every row is still written";
}

TEST_F(Cli, TraceWritesAChromeTracePerMeasuredBackend) {
  const std::string config = write("tiny.yaml", kTiny);
  Result r =
      run("run " + config + " --backends naive,math,flash --no-summary -o " + path("t/r.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_FALSE(fs::exists(path("t/r.traces"))) << "only with --trace";
  r = run("run " + config + " --backends naive,math,flash --trace --force --no-summary -o " +
          path("t/r.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  const CsvTable t = read_csv(path("t/r.csv"));
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const std::string file =
        path("t/r.traces/" + t.at(i, "point_id") + "__" + t.at(i, "backend") + ".json");
    if (t.at(i, "status") != "ok") {  // flash on the CPU: refused, nothing to trace
      EXPECT_FALSE(fs::exists(file)) << file;
      continue;
    }
    std::ifstream in(file);
    ASSERT_TRUE(in) << file;
    const nlohmann::json doc = nlohmann::json::parse(in);  // throws if not JSON
    EXPECT_EQ(doc.at("otherData").at("backend"), t.at(i, "backend"));
    int calls = 0, ops = 0, nested = 0;
    for (const auto& e : doc.at("traceEvents")) {
      if (e.at("ph") != "X") continue;
      calls += e.at("cat") == "call";
      ops += e.at("cat") == "cpu_op";
      nested += e.at("cat") == "cpu_op" && e.at("args").at("depth") != "0";
    }
    EXPECT_EQ(calls, 2) << file;  // kernel_pass_iterations
    EXPECT_GT(ops, calls) << file;
    EXPECT_GT(nested, 0) << file;
  }
}

bool has_matplotlib() { return std::system("python3 -c 'import matplotlib' 2>/dev/null") == 0; }

std::string first_bytes(const std::string& file, size_t n) {
  std::ifstream in(file, std::ios::binary);
  std::string bytes(n, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(n));
  return bytes.substr(0, static_cast<size_t>(in.gcount()));
}

TEST_F(Cli, PlotDrawsEachFamilyTheCountsAndComparisons) {
  if (!has_matplotlib())
    GTEST_SKIP() << "skipped: python3 has no matplotlib (tools/setup.sh installs it)";
  const std::string config = write("tiny.yaml", kTiny);
  ASSERT_EQ(run("run " + config + " --no-summary -o " + path("p/r.csv")).code, 0);
  Result r = run("plot " + path("p/r.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  // Default folder beside the report; one family (h2-d32-fp32-causal-<device>) and the counts.
  const std::string device = read_csv(path("p/r.csv")).at(0, "device");
  const std::string family = path("p/r.plots/r.h2-d32-fp32-causal-" + device + ".png");
  for (const std::string& png : {family, path("p/r.plots/r.counts.png")}) {
    EXPECT_EQ(first_bytes(png, 8), "\x89PNG\r\n\x1a\n") << png;
    EXPECT_NE(r.output.find(png), std::string::npos) << r.output;
  }
  r = run("plot " + path("p/r.csv") + " --format svg -o " + path("svg"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(first_bytes(path("svg/r.counts.svg"), 5), "<?xml");
  // A comparison: the ratios with their intervals, and the JSON they came from.
  r = run("plot " + path("p/r.csv") + " --baseline naive -o " + path("cmp"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(first_bytes(path("cmp/compare.time_ms_median.png"), 4), "\x89PNG");
  EXPECT_TRUE(fs::exists(path("cmp/compare.json")));
  ASSERT_EQ(run("run " + config + " --no-summary -o " + path("p/r2.csv")).code, 0);
  r = run("plot " + path("p/r.csv") + " " + path("p/r2.csv") + " -o " + path("cmp2"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(fs::exists(path("cmp2/compare.time_ms_median.png")));
}

TEST_F(Cli, PlotRefusesWhatIsNotAReport) {
  Result r = run("plot " + path("missing.csv"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("missing.csv"), std::string::npos) << r.output;
  r = run("plot " + write("plain.csv", "a,b\n1,2\n"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("not an attnbench report"), std::string::npos) << r.output;
  r = run("plot " + path("x.csv") + " --format jpg");
  EXPECT_EQ(r.code, 2) << r.output;
  const std::string config = write("tiny.yaml", kTiny);
  ASSERT_EQ(run("run " + config + " --backends naive --no-summary -o " + path("n.csv")).code, 0);
  r = run("plot " + path("n.csv") + " --baseline flsh");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("flsh"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("n.plots"))) << "an unknown baseline draws nothing";
  EXPECT_FALSE(fs::exists(path("plain.plots"))) << "nothing drawn for bad input";
  // -o naming a file (another report) is refused, the file kept; so is a report with nothing to
  // draw: its header alone, or only unmeasured rows.
  const std::string kept = first_bytes(path("n.csv"), 1 << 20);
  r = run("plot " + path("n.csv") + " -o " + path("n.csv"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("is a file; the pictures go in a folder"), std::string::npos) << r.output;
  EXPECT_EQ(first_bytes(path("n.csv"), 1 << 20), kept);
  const std::string header = kept.substr(0, kept.find('\n') + 1);
  r = run("plot " + write("header.csv", header));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("has no rows, only its header"), std::string::npos) << r.output;
  ASSERT_EQ(run("run " + config + " --backends flash --no-summary -o " + path("u.csv")).code, 0);
  if (read_csv(path("u.csv")).at(0, "status") != "ok") {  // flash on a CPU point: unsupported
    r = run("plot " + path("u.csv"));
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("has no measured row"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(path("u.plots")));
  }
}

std::set<std::string> measurement_keys(const CsvTable& t) {
  std::set<std::string> out;
  for (size_t i = 0; i < t.rows.size(); ++i)
    out.insert(t.at(i, "point_id") + " " + t.at(i, "backend") + " " + t.at(i, "timing_mode"));
  return out;
}

TEST_F(Cli, ShardsMergeIntoTheWholeSweep) {
  const std::string config = write("s.yaml", "backends: [naive, inplace, math]\n" +
                                                 std::string(kTiny) + "  causal: [true, false]\n");
  ASSERT_EQ(run("run " + config + " --no-summary -o " + path("whole.csv")).code, 0);
  std::string shards;
  for (int k = 1; k <= 3; ++k) {
    const Result r = run("run " + config + " --no-summary --trace --shard " + std::to_string(k) +
                         "/3 -o " + path("s" + std::to_string(k) + ".csv"));
    ASSERT_EQ(r.code, 0) << r.output;
    const CsvTable part = read_csv(path("s" + std::to_string(k) + ".csv"));
    EXPECT_EQ(part.rows.size(), 2u) << "6 measurements in 3 parts of equal cost";
    EXPECT_EQ(part.at(0, "shard"), std::to_string(k) + "/3");
    shards += " " + path("s" + std::to_string(k) + ".csv");
  }
  // Incomplete: the missing shard and its measurements are named, the merge is still written.
  Result r = run("merge " + path("s1.csv") + " " + path("s3.csv") + " -o " + path("m.csv"));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("shard 2/3: no report given"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(": not measured"), std::string::npos) << r.output;
  EXPECT_EQ(read_csv(path("m.csv")).rows.size(), 4u);
  // Complete: every measurement of the unsharded run, once, with its kernel rows.
  r = run("merge" + shards + " --force -o " + path("m.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  const CsvTable merged = read_csv(path("m.csv"));
  const CsvTable whole = read_csv(path("whole.csv"));
  EXPECT_EQ(measurement_keys(merged), measurement_keys(whole));
  EXPECT_EQ(merged.rows.size(), whole.rows.size());
  EXPECT_TRUE(fs::exists(path("m.kernels.csv")));
  EXPECT_EQ(read_csv(path("m.samples.csv")).rows.empty(), false);
  size_t traces = 0;
  for (const auto& entry : fs::directory_iterator(path("m.traces")))
    traces += entry.is_regular_file();
  EXPECT_EQ(traces, 6u) << "every shard's traces in the merged report's folder";
  // The merged report is a report: compare reads it against the unsharded run.
  EXPECT_EQ(run("compare " + path("whole.csv") + " " + path("m.csv")).code, 0);
  // A shard given twice, or a report of another sweep: refused, nothing written.
  r = run("merge" + shards + " " + path("s2.csv") + " -o " + path("twice.csv"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("is in both"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("twice.csv")));
  ASSERT_EQ(run("run " + write("other.yaml", kTiny) + " --no-summary -o " + path("o.csv")).code, 0);
  r = run("merge " + path("s1.csv") + " " + path("o.csv") + " -o " + path("mixed.csv"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("is of another sweep"), std::string::npos) << r.output;
}

// Shards run in a repository (the config named relative to it), one torn by a kill, merged from
// another folder: the sweep is found above the reports, and the lost measurement is named; with
// the config gone, the gap is still named among the points and backends the reports have.
TEST_F(Cli, ATornShardMergedFromAnotherFolderNamesItsGap) {
  fs::create_directories(path("repo/configs"));
  std::string sweep = "backends: [naive, inplace]\n" + std::string(kTiny);
  sweep.replace(sweep.find("seq_len: 64"), 11, "seq_len: [64, 128]");  // each shard: both backends
  write("repo/configs/t.yaml", sweep);
  const std::string in_repo = "cd '" + path("repo") + "' &&";
  for (const char* k : {"1", "2"})
    ASSERT_EQ(run(std::string("run configs/t.yaml --no-summary --shard ") + k +
                      "/2 -o results/t.shard-" + k + ".csv",
                  in_repo)
                  .code,
              0);
  std::string torn;
  {
    std::ifstream in(path("repo/results/t.shard-2.csv"));
    torn.assign(std::istreambuf_iterator<char>(in), {});
  }
  torn.resize(torn.size() - 30);  // the last row cut short
  write("repo/results/t.shard-2.csv", torn);
  const std::string shards =
      " " + path("repo/results/t.shard-1.csv") + " " + path("repo/results/t.shard-2.csv");
  Result r = run("merge" + shards + " -o " + path("m.csv"));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find(": not measured"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("config was not found"), std::string::npos) << r.output;
  fs::remove(path("repo/configs/t.yaml"));
  r = run("merge" + shards + " --force -o " + path("m.csv"));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("the sweep's config was not found"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(": not measured"), std::string::npos) << r.output;
}

// A report is a regular file: a folder (with or without --resume) or a device as -o is refused
// before anything is measured, the folder left a folder and no side file made beside the device.
TEST_F(Cli, AnOutputThatIsNoRegularFileIsRefusedUpFront) {
  std::string tiny = kTiny;
  tiny.replace(tiny.find("device: auto"), 12, "device: cpu");
  const std::string config = write("o.yaml", "backends: [naive]\n" + tiny);
  fs::create_directories(path("folder"));
  for (const char* extra : {"", " --resume", " --force"}) {
    const Result r = run("run " + config + " -o " + path("folder") + extra);
    EXPECT_EQ(r.code, 2) << extra << r.output;
    EXPECT_NE(r.output.find("is a folder; name the report's file"), std::string::npos)
        << extra << r.output;
    EXPECT_TRUE(fs::is_directory(path("folder"))) << extra;
    EXPECT_TRUE(fs::is_empty(path("folder"))) << extra;
  }
  // A folder that is not there yet, named as one (a trailing '/'): refused, not made.
  const Result slash = run("run " + config + " -o " + path("new") + "/");
  EXPECT_EQ(slash.code, 2) << slash.output;
  EXPECT_NE(slash.output.find("names a folder; name the report's file"), std::string::npos)
      << slash.output;
  EXPECT_FALSE(fs::exists(path("new")));
  const bool had_side_file = fs::exists("/dev/null.kernels.csv");
  const Result r = run("run " + config + " -o /dev/null");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("-o /dev/null: is not a regular file"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("] b1"), std::string::npos) << "measured first:\n" << r.output;
  if (!had_side_file) EXPECT_FALSE(fs::exists("/dev/null.kernels.csv"));
}

// The queue itself is tested without GPUs (scheduler_test.cpp); here, what the flag accepts.
TEST_F(Cli, DevicesRunOneWorkerEachFromOneQueueIntoOneReport) {
  std::string tiny = kTiny;
  tiny.replace(tiny.find("device: auto"), 12, "device: cpu");
  const std::string config =
      write("d.yaml", "backends: [naive, inplace, math]\n" + tiny + "  causal: [true, false]\n");
  const Result r = run("run " + config + " --no-summary --devices 0,1 -o " + path("d.csv"));
  for (const char* too_few : {"GPU 0 does not exist (this machine has no GPU)",
                              "GPU 1 does not exist (this machine has 1)"})
    if (r.code == 2 && r.output.find(too_few) != std::string::npos) {
      EXPECT_FALSE(fs::exists(path("d.csv")));
      GTEST_SKIP() << "skipped: two workers need two GPUs on this machine";
    }
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("worker for GPU 0 ready"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("worker for GPU 1 ready"), std::string::npos) << r.output;
  const CsvTable t = read_csv(path("d.csv"));
  EXPECT_EQ(t.rows.size(), 6u);
  EXPECT_EQ(measurement_keys(t).size(), 6u) << "each measurement once";
  std::set<std::string> devices;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    devices.insert(t.at(i, "device_index"));
    EXPECT_EQ(t.at(i, "status"), "ok") << t.at(i, "reason");
  }
  for (const auto& d : devices) EXPECT_TRUE(d == "0" || d == "1") << d;
}

// A GPU that is not there is refused before anything is measured, on any machine: its rows would
// name a device nobody has.
TEST_F(Cli, DevicesNamesOnlyGpusThisMachineHas) {
  std::string tiny = kTiny;
  tiny.replace(tiny.find("device: auto"), 12, "device: cpu");
  const std::string config = write("d.yaml", "backends: [naive]\n" + tiny);
  for (const std::string bad : {"5", "0,5", "99999999999", "0,0", "zero", "", "1,", "-1"}) {
    const Result r =
        run("run " + config + " --no-summary --devices '" + bad + "' -o " + path("x.csv"));
    EXPECT_EQ(r.code, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("--devices"), std::string::npos) << bad << ": " << r.output;
    EXPECT_FALSE(fs::exists(path("x.csv"))) << bad;
  }
  const Result five = run("run " + config + " --devices 5 -o " + path("x.csv"));
  EXPECT_NE(five.output.find("--devices: GPU 5 does not exist (this machine has "),
            std::string::npos)
      << five.output;
}

TEST_F(Cli, PredictionForAnUnknownBackendIsLocated) {
  const std::string config =
      write("u.yaml", std::string(kTiny) + "expect:\n  flsh:\n    kernels_per_call: 1\n");
  const Result r = run("run " + config + " -o " + path("never.csv"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(config + ":17:3: key 'expect.flsh': no plugin provides backend 'flsh'"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(path("never.csv")));
}

TEST_F(Cli, UnknownBackendInTheConfigNamesItsLine) {
  const std::string config = write("b.yaml", std::string("backends: [naive, flsh]\n") + kTiny);
  const Result r = run("run " + config + " -o " + path("never.csv"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(config + ":1:19: key 'backends': no plugin provides backend 'flsh'"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(path("never.csv")));
}

TEST_F(Cli, MissingConfigAndUnknownFlagExitTwo) {
  EXPECT_EQ(run("run " + path("missing.yaml")).code, 2);
  EXPECT_EQ(run("run --no-such-flag x.yaml").code, 2);
  EXPECT_EQ(run("").code, 2);
}

TEST_F(Cli, DryRunPrintsThePointsAndWritesNothing) {
  const std::string config = write(
      "d.yaml", "sweep:\n  zip:\n    - batch: [4, 1]\n      seq_len: [256, 1024]\n  device: cpu\n");
  const Result r = run("run " + config + " --dry-run -o " + path("never.csv"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("b4-h1-s256-d64-bf16-causal-cpu"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("b1-h1-s1024-d64-bf16-causal-cpu"), std::string::npos) << r.output;
  const std::string counted =
      "2 points x " + std::to_string(split(ATTNBENCH_BUNDLED, ',').size()) + " backends";
  EXPECT_NE(r.output.find(counted), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("never.csv")));
}

// The model's layers (`layers:`) are said with the points, in the file's order; a sweep without
// them says none.
TEST_F(Cli, DryRunSaysTheModelsLayers) {
  const std::string config =
      write("l.yaml",
            "layers: {mla: 7, attention: 20}\nsweep:\n  - seq_len: 64\n    device: cpu\n"
            "  - kind: mla\n    seq_len: 1\n    seq_len_kv: 64\n    device: cpu\n");
  const Result r = run("run " + config + " --dry-run");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("\nlayers: mla 7 attention 20\n"), std::string::npos) << r.output;
  const Result none =
      run("run " + write("n.yaml", "sweep:\n  seq_len: 64\n  device: cpu\n") + " --dry-run");
  EXPECT_EQ(none.output.find("layers:"), std::string::npos) << none.output;
}

TEST_F(Cli, ListShowsWhyBadPluginsFailed) {
  const Result r = run(std::string("list --plugin-dir ") + ATTNBENCH_BAD_PLUGIN_DIR);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("not loaded:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no factory"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("attnbench_abi1.so: built for ABI 1, this attnbench speaks 7"),
            std::string::npos)
      << r.output;
  const Result good = run("list");
  // A terminal's width: the descriptions wrapped under their backends (FlashInfer's is 700
  // characters), each still there in full.
  std::istringstream lines(good.output);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 160u) << line;
  EXPECT_NE(good.output.find("    matmul, scale, masked_fill (out of place), softmax, matmul\n"),
            std::string::npos)
      << good.output;
  EXPECT_NE(good.output.find("flash"), std::string::npos) << good.output;
}

TEST_F(Cli, PointsBackendsAndPassesOverridesChooseTheRows) {
  const std::string config = write("two.yaml", small_sweep("naive, inplace"));
  const Result all = run("run " + config + " --no-summary -o " + path("all.csv"));
  ASSERT_EQ(all.code, 0) << all.output;
  EXPECT_EQ(keys(rows_of(path("all.csv"))),
            (std::vector<std::string>{"b1-h2-s32-d16-fp32-causal-cpu inplace wall",
                                      "b1-h2-s32-d16-fp32-causal-cpu naive wall",
                                      "b1-h2-s48-d16-fp32-causal-cpu inplace wall",
                                      "b1-h2-s48-d16-fp32-causal-cpu naive wall"}));

  const Result some = run("run " + config +
                          " --no-summary --points b1-h2-s48-d16-fp32-causal-cpu --backends naive "
                          "--passes timing -o " +
                          path("some.csv"));
  ASSERT_EQ(some.code, 0) << some.output;
  const auto rows = rows_of(path("some.csv"));
  ASSERT_EQ(keys(rows), std::vector<std::string>{"b1-h2-s48-d16-fp32-causal-cpu naive wall"});
  const auto& row = rows.begin()->second;
  EXPECT_EQ(row.at("status"), "ok");
  EXPECT_FALSE(row.at("time_ms_median").empty());  // timed
  for (const char* not_run :
       {"rel_err", "cpu_us_median", "aten_ops_per_call", "aten_copies_per_call"})
    EXPECT_EQ(row.at(not_run), "")
        << not_run << ": a pass that was left out must leave its columns empty";

  const Result passes =
      run("run " + config + " --no-summary --backends naive --passes ops,correctness -o " +
          path("ops.csv"));
  ASSERT_EQ(passes.code, 0) << passes.output;
  for (const auto& [key, r] : rows_of(path("ops.csv"))) {
    EXPECT_EQ(r.at("time_ms_median"), "") << key;
    EXPECT_EQ(r.at("cpu_us_median"), "") << key;
    EXPECT_EQ(r.at("aten_ops_per_call"), "5") << key;
    EXPECT_EQ(r.at("aten_copies_per_call"), "1") << key;
    EXPECT_FALSE(r.at("rel_err").empty()) << key;
  }

  const Result unknown =
      run("run " + config + " --points b9-h9-s9-d9-fp32-causal-cpu -o " + path("never.csv"));
  EXPECT_EQ(unknown.code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("--points: the sweep has no point 'b9-h9-s9-d9-fp32-causal-cpu'"),
            std::string::npos)
      << unknown.output;
  EXPECT_FALSE(fs::exists(path("never.csv")));
}

TEST_F(Cli, TimingModesOverrideGivesOneRowPerModeOnCudaPoints) {
  const std::string config =
      write("cuda.yaml",
            "backends: [naive]\nmeasurement:\n  timing_modes: cold\n  max_time_s: 0.05\n"
            "  min_time_s: 0\n  warmup_ms: 1\nsweep:\n  seq_len: 64\n  device: cuda\n");
  const Result r =
      run("run " + config + " --no-summary --timing-modes batch,graph -o " + path("modes.csv"));
  const auto rows = rows_of(path("modes.csv"));
  ASSERT_EQ(keys(rows), (std::vector<std::string>{"b1-h1-s64-d64-bf16-causal-cuda naive batch",
                                                  "b1-h1-s64-d64-bf16-causal-cuda naive graph"}))
      << r.output;
  for (const auto& [key, row] : rows) {
    if (row.at("status") == "unsupported")  // a machine without a GPU
      EXPECT_EQ(row.at("reason"), "no CUDA device on this machine") << key;
    else
      EXPECT_EQ(row.at("status"), "ok") << key << ": " << row.at("reason");
  }
  EXPECT_EQ(r.code, 0) << r.output;

  const Result twice = run("run " + config + " --timing-modes cold,cold -o " + path("never.csv"));
  EXPECT_EQ(twice.code, 2) << twice.output;
  EXPECT_NE(twice.output.find("--timing-modes: timing mode 'cold' appears twice"),
            std::string::npos)
      << twice.output;
  const Result wall = run("run " + config + " --timing-modes wall -o " + path("never.csv"));
  EXPECT_EQ(wall.code, 2) << wall.output;
  const Result pass = run("run " + config + " --passes timing,ncu -o " + path("never.csv"));
  EXPECT_EQ(pass.code, 2) << pass.output;
  EXPECT_NE(pass.output.find("--passes: unknown pass 'ncu'"), std::string::npos) << pass.output;
  EXPECT_FALSE(fs::exists(path("never.csv")));
}

TEST_F(Cli, SamplesFileHoldsEveryTimingSample) {
  const std::string config =
      write("s.yaml", small_sweep("naive, inplace", "  keep_samples: true\n"));
  const Result r = run("run " + config + " --no-summary -o " + path("s.csv"));
  ASSERT_EQ(r.code, 0) << r.output;
  const auto rows = rows_of(path("s.csv"));
  const CsvTable samples = read_csv(path("s.samples.csv"));
  EXPECT_EQ(samples.header,
            (std::vector<std::string>{"point_id", "backend", "timing_mode", "repetition", "sample",
                                      "time_ms", "sm_clock_mhz"}));
  std::map<std::string, std::vector<double>> by_row;
  for (size_t i = 0; i < samples.rows.size(); ++i) {
    const std::string key = samples.at(i, "point_id") + " " + samples.at(i, "backend") + " " +
                            samples.at(i, "timing_mode");
    EXPECT_EQ(samples.at(i, "sample"), std::to_string(by_row[key].size())) << key;
    by_row[key].push_back(std::stod(samples.at(i, "time_ms")));
  }
  ASSERT_EQ(by_row.size(), rows.size());
  for (const auto& [key, row] : rows) {
    const auto& times = by_row.at(key);
    EXPECT_EQ(std::to_string(times.size()), row.at("samples")) << key;
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::stod(row.at("time_ms_p10")) >= sorted.front(), true) << key;
    EXPECT_EQ(std::stod(row.at("time_ms_p90")) <= sorted.back(), true) << key;
  }
}

TEST_F(Cli, RowsEndingWrongOrErrorExitOneAndKeepEveryRow) {
  const std::string config = write("f.yaml", small_sweep("naive, zeros, throws, cached"));
  const Result r =
      run("run " + config + " --plugin-dir " +
          plugin_folder(dir_, {"naive"}, {ATTNBENCH_FAULTY_PLUGIN_DIR}) + " -o " + path("f.csv"));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("6 row(s) ended error, oom, wrong, crashed or timeout"),
            std::string::npos)
      << r.output;
  const auto rows = rows_of(path("f.csv"));
  ASSERT_EQ(rows.size(), 8u);
  for (const auto& [key, row] : rows) {
    if (row.at("backend") == "naive") EXPECT_EQ(row.at("status"), "ok") << key;
    if (row.at("backend") == "zeros") {
      EXPECT_EQ(row.at("status"), "wrong") << key;
      EXPECT_NE(row.at("reason").find("above the fp32 tolerance"), std::string::npos)
          << row.at("reason");
      EXPECT_FALSE(row.at("time_ms_median").empty()) << key;  // a wrong answer is still timed
    }
    if (row.at("backend") == "cached") {  // one tensor handed back, never written again
      EXPECT_EQ(row.at("status"), "wrong") << key;
      EXPECT_EQ(row.at("rel_err"), "") << key;  // the poison the harness put in it: NaN
      EXPECT_NE(row.at("reason").find("left unwritten"), std::string::npos) << row.at("reason");
    }
    if (row.at("backend") == "throws") {
      EXPECT_EQ(row.at("status"), "error") << key;
      EXPECT_EQ(row.at("reason"), "first call: kernel launch failed: too many resources requested")
          << key;
    }
  }
  const Result fine = run("run " + config + " --plugin-dir " +
                          plugin_folder(dir_ / "again", {"naive"}, {ATTNBENCH_FAULTY_PLUGIN_DIR}) +
                          " --backends naive -o " + path("ok.csv"));
  EXPECT_EQ(fine.code, 0) << fine.output;
}

// The probe plugins of configs/probes.yaml that misbehave on the CPU too: a cache keyed on the
// inputs' values hands back the tensor the harness poisoned, a backend that fills the first and
// last sequence only fails the whole-output check. (graph_cheat and leaks misbehave only on the
// GPU: the probes step of tools/device_run.sh runs them there.)
TEST_F(Cli, ProbesThatFoolANaiveCheckAreWrong) {
  const std::string config =
      write("p.yaml", small_sweep("naive, value_cache, partial") + "  batch: 3\n");
  const Result r =
      run("run " + config + " --plugin-dir " +
          plugin_folder(dir_, {"naive"}, {ATTNBENCH_FAULTY_PLUGIN_DIR}) + " -o " + path("p.csv"));
  EXPECT_EQ(r.code, 1) << r.output;
  const auto rows = rows_of(path("p.csv"));
  ASSERT_EQ(rows.size(), 6u) << r.output;
  for (const auto& [key, row] : rows) {
    EXPECT_EQ(row.at("status"), row.at("backend") == "naive" ? "ok" : "wrong") << key;
    if (row.at("backend") == "value_cache")
      EXPECT_NE(row.at("reason").find("left unwritten"), std::string::npos) << row.at("reason");
    if (row.at("backend") == "partial")
      EXPECT_NE(row.at("reason").find("above the fp32 tolerance"), std::string::npos)
          << row.at("reason");
  }
}

// The workload axes end to end on the CPU: grouped-query heads, a query block against a longer
// key sequence, and the backward pass; a backend without one says so in its row.
TEST_F(Cli, GqaNonSquareAndBackwardRowsOnTheCpu) {
  const std::string config = write("w.yaml", R"(backends: [naive, inplace, math, zeros]
measurement:
  warmup_ms: 1
  min_samples: 3
  max_samples: 5
  min_time_s: 0
  max_time_s: 0.05
  cpu_pass_calls: 3
sweep:
  heads: 4
  kv_heads: 2
  seq_len: 16
  seq_len_kv: 40
  head_dim: 16
  dtype: fp32
  direction: [fwd, bwd]
  device: cpu
)");
  const Result r =
      run("run " + config + " --plugin-dir " +
          plugin_folder(dir_, {"naive", "inplace", "math"}, {ATTNBENCH_FAULTY_PLUGIN_DIR}) +
          " --backends naive,inplace,math,zeros -o " + path("w.csv"));
  EXPECT_EQ(r.code, 1) << r.output;  // zeros is wrong forward
  const auto rows = rows_of(path("w.csv"));
  ASSERT_EQ(rows.size(), 8u) << r.output;
  const std::string fwd = "b1-h4-kv2-s16-skv40-d16-fp32-causal-cpu";
  const std::string bwd = fwd + "-bwd";
  for (const char* backend : {"naive", "inplace", "math"})
    for (const std::string& id : {fwd, bwd}) {
      const auto& row = rows.at(id + " " + backend + " wall");
      EXPECT_EQ(row.at("status"), "ok") << id << " " << backend << ": " << row.at("reason");
      EXPECT_EQ(row.at("kv_heads"), "2");
      EXPECT_EQ(row.at("seq_len_kv"), "40");
      EXPECT_EQ(row.at("direction"), id == fwd ? "fwd" : "bwd");
      EXPECT_LT(std::stod(row.at("rel_err")), 1e-4) << id << " " << backend;
      EXPECT_FALSE(row.at("time_ms_median").empty());
      EXPECT_FALSE(row.at("aten_ops").empty());
    }
  // 16 rows seeing 25 .. 40 keys: 520 pairs; backward 2.5 times the forward's work.
  EXPECT_EQ(rows.at(fwd + " naive wall").at("gflop"), format_number(4.0 * 4 * 16 * 520 / 1e9));
  EXPECT_EQ(rows.at(bwd + " naive wall").at("gflop"),
            format_number(2.5 * 4.0 * 4 * 16 * 520 / 1e9));
  // The backward of the textbook attention is autograd's: the expanded k and v flow back through
  // repeat_interleave's backward (a sum over the group).
  EXPECT_NE(rows.at(bwd + " naive wall").at("aten_ops").find("sum"), std::string::npos)
      << rows.at(bwd + " naive wall").at("aten_ops");
  EXPECT_EQ(rows.at(fwd + " zeros wall").at("status"), "wrong");
  const auto& no_backward = rows.at(bwd + " zeros wall");
  EXPECT_EQ(no_backward.at("status"), "unsupported");
  EXPECT_EQ(no_backward.at("reason"),
            "zeros has no backward pass (Backend::prepare_backward returns none)");
}

TEST_F(Cli, UnsupportedRowsAreNotFailures) {
  const std::string config = write("u.yaml", small_sweep("flash, cudnn"));
  const Result r = run("run " + config + " --no-summary -o " + path("u.csv"));
  EXPECT_EQ(r.code, 0) << r.output;
  for (const auto& [key, row] : rows_of(path("u.csv")))
    EXPECT_EQ(row.at("status"), "unsupported") << key;
}

TEST_F(Cli, SummaryPrintsOneLinePerRowAndTheReasons) {
  const std::string config = write("sum.yaml", small_sweep("naive, flash"));
  ASSERT_EQ(run("run " + config + " --no-summary -o " + path("sum.csv")).code, 0);
  const Result r = run("summary " + path("sum.csv"));
  EXPECT_EQ(r.code, 0) << r.output;
  std::vector<std::string> lines;
  std::istringstream in(r.output);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  // header, rule, 4 rows, a blank line, one reason per (backend, point) that did not run
  ASSERT_EQ(lines.size(), 9u) << r.output;
  EXPECT_EQ(lines[0].rfind("point", 0), 0u) << lines[0];
  size_t ok = 0, unsupported = 0;
  for (size_t i = 2; i < 6; ++i) {
    ok +=
        lines[i].find(" naive ") != std::string::npos && lines[i].find(" ok ") != std::string::npos;
    unsupported += lines[i].find(" flash ") != std::string::npos &&
                   lines[i].find(" unsupported") != std::string::npos;
  }
  EXPECT_EQ(ok, 2u) << r.output;
  EXPECT_EQ(unsupported, 2u) << r.output;
  EXPECT_EQ(lines[7].rfind("  flash @ b1-h2-s32-d16-fp32-causal-cpu [unsupported]: "
                           "FlashAttention-2 is a CUDA kernel",
                           0),
            0u)
      << lines[7];
  EXPECT_EQ(run("summary " + path("missing.csv")).code, 2);
  EXPECT_EQ(run("summary " + write("other.csv", "a,b\n1,2\n")).code, 2);
}

std::string report(const std::string& backend, const std::string& ms, const std::string& kernels) {
  std::string row;
  const auto columns = row_header();
  for (size_t i = 0; i < columns.size(); ++i) {
    std::string v;
    if (columns[i] == "schema_version") v = std::to_string(kCsvSchemaVersion);
    if (columns[i] == "point_id") v = "p1";
    if (columns[i] == "backend") v = backend;
    if (columns[i] == "timing_mode") v = "cold";
    if (columns[i] == "status") v = "ok";
    if (columns[i] == "time_ms_median") v = ms;
    if (columns[i] == "time_rel_noise") v = "0.01";
    if (columns[i] == "kernels_per_call") v = kernels;
    row += (i ? "," : "") + v;
  }
  return row + "\n";
}

std::string header_line() {
  std::string header;
  for (const auto& c : row_header()) header += (header.empty() ? "" : ",") + c;
  return header + "\n";
}

TEST_F(Cli, CompareFailsOnARegressionBeyondNoise) {
  const std::string base = write("base.csv", header_line() + report("flash", "1.0", "1")),
                    slow = write("slow.csv", header_line() + report("flash", "1.5", "1"));
  const Result same = run("compare " + base + " " + base + " --fail-on-regression 5");
  EXPECT_EQ(same.code, 0) << same.output;
  const Result r = run("compare " + base + " " + slow + " --fail-on-regression 5 --markdown");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("| p1 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 regression(s)"), std::string::npos) << r.output;
  EXPECT_EQ(run("compare " + base + " " + slow + " --fail-on-regression 60").code,
            0);                                            // 50% slower, under 60%
  EXPECT_EQ(run("compare " + base + " " + slow).code, 0);  // no threshold: a report, not a verdict
  EXPECT_EQ(run("compare " + base + " " + slow + " --fail-on-regression -1").code, 2);
  const Result json =
      run("compare " + base + " " + slow + " --fail-on-regression 5 --output-format json");
  EXPECT_EQ(json.code, 1) << json.output;
  const auto doc = nlohmann::json::parse(json.output);
  EXPECT_EQ(doc.at("regressions"), 1);
  EXPECT_EQ(doc.at("metrics").at(0).at("rows").at(0).at("verdict"), "worse");
  EXPECT_EQ(run("compare " + base + " " + slow + " --output-format yaml").code, 2);
  EXPECT_EQ(run("compare " + base).code, 2);  // one report needs --baseline
  EXPECT_EQ(run("compare " + base + " " + write("bad.csv", "a,b\n1\n")).code, 2);
}

// export --format gbench: one Google Benchmark entry per row, failed rows as gbench's failed
// benchmarks, and every key Google Benchmark's own JSON has, with the same JSON types.
TEST_F(Cli, ExportWritesGoogleBenchmarkJson) {
  const std::string config = write("e.yaml", small_sweep("naive, zeros"));
  run("run " + config + " --plugin-dir " +
      plugin_folder(dir_, {"naive"}, {ATTNBENCH_FAULTY_PLUGIN_DIR}) + " -o " + path("e.csv"));
  const Result r = run("export " + path("e.csv") + " --format gbench -o " + path("e.json"));
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream in(path("e.json"));
  const auto ours = nlohmann::json::parse(in);
  const auto rows = rows_of(path("e.csv"));
  // Every naive row: one run per raw sample, then mean, median and stddev, in nanoseconds, equal
  // to the report's own numbers; every zeros row: one failed benchmark.
  std::map<std::string, std::vector<nlohmann::json>> by_run;
  for (const auto& b : ours.at("benchmarks")) by_run[b.at("run_name")].push_back(b);
  ASSERT_EQ(by_run.size(), rows.size());
  for (const auto& [key, row] : rows) {
    const std::string name = row.at("point_id") + "/" + row.at("backend") + "/wall";
    ASSERT_TRUE(by_run.count(name)) << name;
    const auto& runs = by_run.at(name);
    for (const auto& b : runs) EXPECT_EQ(b.at("time_unit"), "ns") << name;
    if (row.at("backend") == "naive") {
      const size_t samples = std::stoul(row.at("samples"));
      ASSERT_EQ(runs.size(), samples + 3) << name;
      for (size_t i = 0; i < samples; ++i) {
        EXPECT_EQ(runs[i].at("run_type"), "iteration");
        EXPECT_EQ(runs[i].at("repetition_index"), i);
        EXPECT_EQ(runs[i].at("repetitions"), samples);
        EXPECT_DOUBLE_EQ(runs[i].at("cpu_time").get<double>(),
                         std::stod(row.at("cpu_us_median")) * 1e3);
      }
      const auto& median = runs[samples + 1];
      EXPECT_EQ(median.at("name"), name + "_median");
      EXPECT_EQ(median.at("aggregate_name"), "median");
      EXPECT_NEAR(median.at("real_time").get<double>(), std::stod(row.at("time_ms_median")) * 1e6,
                  1e-9 * std::stod(row.at("time_ms_median")) * 1e6);
      EXPECT_DOUBLE_EQ(runs[0].at("TFLOP/s").get<double>(), std::stod(row.at("tflops")));
      EXPECT_DOUBLE_EQ(runs[0].at("host_us").get<double>(), std::stod(row.at("cpu_us_median")));
    } else {
      ASSERT_EQ(runs.size(), 1u) << name;
      EXPECT_EQ(runs[0].at("error_occurred"), true) << name;
      EXPECT_EQ(runs[0].at("error_message").get<std::string>().rfind("wrong: ", 0), 0u) << name;
    }
  }
  // The machine the run was made on, not the GPU.
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  EXPECT_EQ(ours.at("context").at("host_name"), host);
  EXPECT_EQ(ours.at("context").at("num_cpus"), sysconf(_SC_NPROCESSORS_ONLN));
  EXPECT_EQ(ours.at("context").at("attnbench_device_name"), rows.begin()->second.at("device_name"));
  EXPECT_EQ(ours.at("benchmarks").at(0).at("name"), "b1-h2-s32-d16-fp32-causal-cpu/naive/wall");
  EXPECT_EQ(run("export " + path("e.csv") + " --format csv").code, 2);
  EXPECT_EQ(run("export " + path("nothing.csv") + " --format gbench").code, 2);
  // Never over what was measured (not even with --force); another existing file only with --force.
  for (const std::string measured : {path("e.csv"), path("e.kernels.csv")}) {
    const Result over = run("export " + path("e.csv") + " --format gbench --force -o " + measured);
    EXPECT_EQ(over.code, 2) << over.output;
    EXPECT_NE(over.output.find("is " + measured + ", what was measured"), std::string::npos)
        << over.output;
  }
  EXPECT_EQ(rows_of(path("e.csv")).size(), rows.size());
  const Result again = run("export " + path("e.csv") + " --format gbench -o " + path("e.json"));
  EXPECT_EQ(again.code, 2);
  EXPECT_NE(again.output.find(path("e.json") + " exists: --force overwrites it"), std::string::npos)
      << again.output;
  EXPECT_EQ(run("export " + path("e.csv") + " --format gbench --force -o " + path("e.json")).code,
            0);
#ifdef ATTNBENCH_GBENCH_TOOL
  // Google Benchmark's own file, from the plugin-overhead benchmark (one short run).
  const std::string tool = std::string(ATTNBENCH_GBENCH_TOOL) + " --plugin-dir " +
                           ATTNBENCH_PLUGIN_DIR +
                           " --benchmark_filter=plugin/naive/cpu --benchmark_min_time=0.01" +
                           " --benchmark_out_format=json --benchmark_out=" + path("g.json") + " >" +
                           path("g.log") + " 2>&1";
  ASSERT_EQ(std::system(tool.c_str()), 0) << tool;
  std::ifstream gin(path("g.json"));
  ASSERT_TRUE(gin) << tool;
  const auto theirs = nlohmann::json::parse(gin);
  auto same_keys = [](const nlohmann::json& want, const nlohmann::json& got, const char* what) {
    for (const auto& [key, value] : want.items()) {
      ASSERT_TRUE(got.contains(key)) << what << " lacks '" << key << "'";
      EXPECT_EQ(got.at(key).is_number(), value.is_number()) << what << " '" << key << "'";
      EXPECT_EQ(got.at(key).is_string(), value.is_string()) << what << " '" << key << "'";
      EXPECT_EQ(got.at(key).is_array(), value.is_array()) << what << " '" << key << "'";
    }
  };
  same_keys(theirs.at("context"), ours.at("context"), "context");
  ASSERT_FALSE(theirs.at("benchmarks").empty());
  same_keys(theirs.at("benchmarks").at(0), ours.at("benchmarks").at(0), "benchmark");
#endif
}

// Google Benchmark's own compare.py (Debian's libbenchmark-tools) reads the export: it finds a
// planted 30% slowdown with its U test on the raw samples, and shows times in its unit. The slow
// report is the measured one with every time (row and sample) times 1.3, so nothing here depends
// on how busy the machine is.
TEST_F(Cli, GoogleBenchmarksCompareFindsAPlantedSlowdownInTheExport) {
  const std::string tool = "/usr/share/benchmark/compare.py";
  if (!fs::exists(tool) || std::system("python3 -c 'import scipy' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "skipped: " << tool << " or scipy not installed (tools/setup.sh installs both)";
  // max_time_s far past what 60 samples take, so that a loaded machine still gives 40 or more.
  const std::string config =
      write("p.yaml",
            "backends: [naive]\nmeasurement: {warmup_ms: 5, min_samples: 40, max_samples: 60, "
            "min_time_s: 0.05, max_time_s: 60, cpu_pass_calls: 5}\nsweep: {batch: 1, "
            "heads: 4, seq_len: 256, head_dim: 32, dtype: fp32, causal: true, device: cpu}\n");
  ASSERT_EQ(run("run " + config + " --no-summary -o " + path("base.csv")).code, 0);
  // The planted slowdown puts every slow sample above every base sample, however noisy the
  // machine made them: twice the base's largest over its smallest (and at least 30%). The
  // U-test's p-value then depends on the counts alone, not on the load.
  double fastest = INFINITY, slowest = 0;
  {
    const CsvTable samples = read_csv(path("base.samples.csv"));
    const int c = samples.column("time_ms");
    ASSERT_GE(c, 0);
    for (const auto& row : samples.rows) {
      fastest = std::min(fastest, std::stod(row[c]));
      slowest = std::max(slowest, std::stod(row[c]));
    }
  }
  ASSERT_GT(fastest, 0);
  const double factor = std::max(1.3, 2 * slowest / fastest);
  for (const char* file : {".csv", ".samples.csv"}) {  // the same run, `factor` times slower
    CsvTable t = read_csv(path(std::string("base") + file));
    std::string text = csv_line(t.header);
    for (auto& row : t.rows) {
      for (const char* column : {"time_ms", "time_ms_median", "time_ms_p10", "time_ms_p90"}) {
        const int c = t.column(column);
        if (c >= 0 && !row[c].empty()) row[c] = format_number(std::stod(row[c]) * factor);
      }
      text += csv_line(row);
    }
    write(std::string("slow") + file, text);
  }
  for (const char* name : {"base", "slow"})
    ASSERT_EQ(run("export " + path(std::string(name) + ".csv") + " --format gbench -o " +
                  path(std::string(name) + ".json"))
                  .code,
              0);
  const std::string command = "python3 " + tool + " -d " + path("diff.json") + " benchmarks " +
                              path("base.json") + " " + path("slow.json") + " >" +
                              path("compare.log") + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(path("diff.json"));
  const auto diff = nlohmann::json::parse(in);
  const std::string name = "b1-h4-s256-d32-fp32-causal-cpu/naive/wall";
  bool saw_utest = false, saw_median = false;
  for (const auto& b : diff) {
    if (b.at("name") == name) {
      saw_utest = true;
      EXPECT_LT(b.at("utest").at("time_pvalue").get<double>(), 0.05);
      EXPECT_GE(b.at("utest").at("nr_of_repetitions").get<int>(), 40);
    }
    if (b.at("name") == name + "_median") {
      saw_median = true;
      EXPECT_EQ(b.at("time_unit"), "ns");
      const auto& m = b.at("measurements").at(0);
      EXPECT_GT(m.at("real_time").get<double>(), 1000);    // ns: no sub-unit 0 or 1
      EXPECT_NEAR(m.at("time").get<double>(), factor - 1, 1e-9);  // exactly the planted change
    }
  }
  EXPECT_TRUE(saw_utest && saw_median) << diff.dump();
}

// Runs keep their raw samples by default and compare finds them next to each report: the time
// rows are judged on bootstrap intervals, not on the noise columns.
TEST_F(Cli, CompareJudgesTimeOnTheSamplesBesideEachReport) {
  const std::string config = write("a.yaml", small_sweep("naive"));
  const std::string plugins = plugin_folder(dir_, {"naive"}, {});
  for (const char* name : {"a", "b"})
    ASSERT_EQ(run("run " + config + " --plugin-dir " + plugins + " -o " +
                  path(std::string(name) + ".csv"))
                  .code,
              0);
  ASSERT_TRUE(fs::exists(path("a.samples.csv")));
  const Result r = run("compare " + path("a.csv") + " " + path("b.csv") +
                       " --metric time_ms_median,cpu_us_median --output-format json");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output);
  const auto& time_rows = doc.at("metrics").at(0).at("rows");
  ASSERT_EQ(time_rows.size(), 2u);
  const auto a_rows = rows_of(path("a.csv")), b_rows = rows_of(path("b.csv"));
  for (const auto& row : time_rows) {
    // Five samples on both sides make a bootstrap; a time cap may stop a row at three or four.
    const std::string key = row.at("point_id").get<std::string>() + " naive wall";
    const bool enough = std::stoi(a_rows.at(key).at("samples")) >= 5 &&
                        std::stoi(b_rows.at(key).at("samples")) >= 5;
    EXPECT_EQ(row.at("interval_from"), enough ? "samples" : "noise") << key;
    EXPECT_LE(row.at("ci_low").get<double>(), row.at("ci_high").get<double>());
    EXPECT_EQ(row.at("threshold"), 0.05);
  }
  for (const auto& row : doc.at("metrics").at(1).at("rows")) {
    EXPECT_EQ(row.at("interval_from"), "noise");  // host time has no samples file
    EXPECT_EQ(row.at("threshold"), 0.35);
  }
  const Result strict = run("compare " + path("a.csv") + " " + path("b.csv") +
                            " --threshold 2.5 --output-format json");
  EXPECT_EQ(
      nlohmann::json::parse(strict.output).at("metrics").at(0).at("rows").at(0).at("threshold"),
      0.025);
}

// --repetitions N: the sweep run through N times, every row, kernel row and sample tagged with its
// repetition; --resume with a larger N measures only the repetitions missing.
TEST_F(Cli, RepetitionsRunTheSweepAgainAndResumeAddsTheMissingOnes) {
  const std::string config = write("r.yaml", small_sweep("naive"));
  const std::string plugins = plugin_folder(dir_, {"naive"}, {});
  const Result once =
      run("run " + config + " --plugin-dir " + plugins + " --no-summary -o " + path("r.csv"));
  ASSERT_EQ(once.code, 0) << once.output;
  const Result more = run("run " + config + " --plugin-dir " + plugins +
                          " --repetitions 3 --resume --no-summary -o " + path("r.csv"));
  ASSERT_EQ(more.code, 0) << more.output;
  EXPECT_NE(more.output.find("2 (point, backend) done"), std::string::npos) << more.output;
  const CsvTable rows = read_csv(path("r.csv"));
  ASSERT_EQ(rows.rows.size(), 6u);  // 2 points x 3 repetitions
  std::map<std::string, int> per_repetition;
  for (size_t r = 0; r < rows.rows.size(); ++r) ++per_repetition[rows.at(r, "repetition")];
  EXPECT_EQ(per_repetition, (std::map<std::string, int>{{"0", 2}, {"1", 2}, {"2", 2}}));
  const CsvTable samples = read_csv(path("r.samples.csv"));
  std::set<std::string> sample_reps;
  for (size_t r = 0; r < samples.rows.size(); ++r) sample_reps.insert(samples.at(r, "repetition"));
  EXPECT_EQ(sample_reps, (std::set<std::string>{"0", "1", "2"}));
  // compare joins the three repetitions of each row into one.
  const Result c = run("compare " + path("r.csv") + " " + path("r.csv") + " --output-format json");
  const auto doc = nlohmann::json::parse(c.output);
  EXPECT_EQ(doc.at("joined"), 2);
  for (const auto& row : doc.at("metrics").at(0).at("rows")) {
    EXPECT_EQ(row.at("base_repetitions"), 3);
    EXPECT_EQ(row.at("new_repetitions"), 3);
    // A report against itself: each repetition against itself gives ratio 1, inside the interval.
    EXPECT_TRUE(row.at("verdict") == "same" || row.at("verdict") == "unsure") << row;
  }
  EXPECT_EQ(run("run " + config + " --repetitions 0 -o " + path("x.csv")).code, 2);
}

TEST_F(Cli, CompareBackendsByMetricFromTheCommandLine) {
  const std::string one =
      write("one.csv", header_line() + report("inplace", "2.0", "5") + report("naive", "2.5", "6") +
                           report("flash", "0.5", "1"));
  const Result r =
      run("compare " + one +
          " --baseline inplace --metric time_ms_median,kernels_per_call --fail-on-regression 10");
  EXPECT_EQ(r.code, 1) << r.output;  // naive: 25% slower and one kernel more
  EXPECT_NE(r.output.find("2 regression(s)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("== kernels_per_call"), std::string::npos) << r.output;
  const Result better =
      run("compare " + one + " --baseline naive --metric kernels_per_call --fail-on-regression 10");
  EXPECT_EQ(better.code, 0)
      << better.output;  // every other backend launches fewer kernels than naive
  const Result unknown_metric = run("compare " + one + " --baseline inplace --metric speed");
  EXPECT_EQ(unknown_metric.code, 2) << unknown_metric.output;
  EXPECT_NE(unknown_metric.output.find("'speed' is not a metric"), std::string::npos)
      << unknown_metric.output;
  const Result unknown_backend = run("compare " + one + " --baseline cudnn");
  EXPECT_EQ(unknown_backend.code, 2) << unknown_backend.output;
  EXPECT_NE(unknown_backend.output.find("no rows for the baseline backend 'cudnn'"),
            std::string::npos);
  EXPECT_EQ(run("compare " + one + " " + one + " --baseline inplace").code, 2);
}

// With a GPU it measures and writes the file; without one it says so, exits 1 and writes nothing.
TEST_F(Cli, CalibrateWritesItsFileOrSaysWhyNot) {
  const Result r = run("calibrate -o " + path("cal/gpu.json"));
  if (r.code == 0) {
    std::ifstream in(path("cal/gpu.json"));
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"bf16_matmul_tflops\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"copy_gbps\""), std::string::npos) << text;
  } else {
    EXPECT_EQ(r.code, 1) << r.output;
    EXPECT_NE(r.output.find("calibrate needs a CUDA device; none was found"), std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(path("cal/gpu.json")));
  }
}

// Plugins from several folders: --plugin-dir repeated and $ATTNBENCH_PLUGIN_PATH; list names each
// plugin's file, and run refuses a backend name two files provide.
TEST_F(Cli, PluginsFromSeveralFoldersAndTheSameNameTwice) {
  const std::string a = plugin_folder(dir_ / "a", {"naive"}, {});
  const std::string b = plugin_folder(dir_ / "b", {"inplace"}, {});
  const std::string c = plugin_folder(dir_ / "c", {"math"}, {});
  const Result list =
      run("list --plugin-dir " + a + " --plugin-dir " + b, "ATTNBENCH_PLUGIN_PATH=" + c);
  EXPECT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find("plugins in " + a + ", " + b + " and " + c), std::string::npos)
      << list.output;
  for (const auto& [dir, name] : {std::pair{a, "naive"}, {b, "inplace"}, {c, "math"}})
    EXPECT_NE(list.output.find(dir + "/attnbench_" + name + ".so"), std::string::npos)
        << list.output;
  const std::string config = write("s.yaml", small_sweep("naive, inplace, math"));
  const Result ok =
      run("run " + config + " --plugin-dir " + a + " --plugin-dir " + b + " -o " + path("s.csv"),
          "ATTNBENCH_PLUGIN_PATH=" + c);
  EXPECT_EQ(ok.code, 0) << ok.output;
  EXPECT_EQ(rows_of(path("s.csv")).size(), 6u);
  const std::string twin = plugin_folder(dir_ / "twin", {"naive"}, {});
  const Result dup = run("run " + config + " --plugin-dir " + a + " --plugin-dir " + twin + " -o " +
                         path("d.csv"));
  EXPECT_EQ(dup.code, 2) << dup.output;
  EXPECT_NE(dup.output.find("two plugins named 'naive': " + a + "/attnbench_naive.so and " + twin +
                            "/attnbench_naive.so"),
            std::string::npos)
      << dup.output;
  EXPECT_FALSE(fs::exists(path("d.csv")));
}

TEST_F(Cli, ListRefusesABadPluginWithoutRunningItsCode) {
  // attnbench_wrong_abi.so aborts in a static initialiser: if it were loaded, `list` would crash.
  const Result r = run(std::string("list --plugin-dir ") + ATTNBENCH_BAD_PLUGIN_DIR);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("attnbench_wrong_abi.so: built for ABI 48, this attnbench speaks 7"),
            std::string::npos)
      << r.output;
}

// Bad flags name the bound they break, and nothing is measured: --repetitions below 1 (at 0,
// its edge), an empty -o (never the config's default output in its place).
TEST_F(Cli, RepetitionsBelowOneAndAnEmptyOutputAreRefusedSayingWhy) {
  const std::string config = write("c.yaml", "sweep:\n  seq_len: 8\n  device: cpu\n");
  for (const char* n : {"0", "-1", "x"}) {
    const Result r = run("run " + config + " --repetitions " + n + " -o " + path("r.csv"));
    EXPECT_EQ(r.code, 2) << n << ": " << r.output;
    EXPECT_NE(r.output.find("a whole number of at least 1, not '" + std::string(n) + "'"),
              std::string::npos)
        << r.output;
  }
  const Result one = run("run " + config + " --repetitions 1 --dry-run -o " + path("one.csv"));
  EXPECT_EQ(one.code, 0) << one.output;
  const Result empty = run("run " + config + " -o ''");
  EXPECT_EQ(empty.code, 2) << empty.output;
  EXPECT_NE(empty.output.find("the output path is empty"), std::string::npos) << empty.output;
  EXPECT_FALSE(std::filesystem::exists(path("r.csv")));
}

// --resume keeps a report, --force replaces it: both at once is refused, never one ignored.
TEST_F(Cli, ResumeAndForceTogetherAreRefused) {
  const std::string config = write("c.yaml", "sweep:\n  seq_len: 8\n  device: cpu\n");
  const Result r = run("run " + config + " --resume --force -o " + path("r.csv"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--resume excludes --force"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("r.csv")));
}

// export refuses a file that is no attnbench report, and leaves no output file behind.
TEST_F(Cli, ExportOfARefusedReportWritesNothing) {
  const std::string bad = write("bad.csv", "a,b\n1,2\n");
  const Result r = run("export " + bad + " --format gbench -o " + path("out.json"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("not an attnbench report"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(path("out.json")));
}

}  // namespace
}  // namespace attnbench
