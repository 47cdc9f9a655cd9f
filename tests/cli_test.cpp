// The attnbench executable end to end: exit codes, messages, files written or not.
#include "csv.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

namespace attnbench {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string output;  // stdout and stderr
};

Result run(const std::string& args) {
  const std::string command = std::string(ATTNBENCH_EXE) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string output;
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) output.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attnbench-cli-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream((dir_ / name).string()) << text;
    return (dir_ / name).string();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

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
  ASSERT_EQ(t.rows.size(), 6u);
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
  EXPECT_NE(r.output.find(config + ":3:10: key 'sweep.batch': must be at least 1"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("never.csv")));
}

TEST_F(Cli, UnknownBackendInTheConfigNamesItsLine) {
  const std::string config = write("b.yaml", std::string("backends: [naive, flsh]\n") + kTiny);
  const Result r = run("run " + config + " -o " + path("never.csv"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(config + ":1:19: key 'backends': no plugin provides backend 'flsh'"), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(path("never.csv")));
}

TEST_F(Cli, MissingConfigAndUnknownFlagExitTwo) {
  EXPECT_EQ(run("run " + path("missing.yaml")).code, 2);
  EXPECT_EQ(run("run --no-such-flag x.yaml").code, 2);
  EXPECT_EQ(run("").code, 2);
}

TEST_F(Cli, DryRunPrintsThePointsAndWritesNothing) {
  const std::string config = write("d.yaml", "sweep:\n  zip:\n    - batch: [4, 1]\n      seq_len: [256, 1024]\n  device: cpu\n");
  const Result r = run("run " + config + " --dry-run -o " + path("never.csv"));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("b4-h1-s256-d64-bf16-causal-cpu"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("b1-h1-s1024-d64-bf16-causal-cpu"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2 points x 6 backends"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("never.csv")));
}

TEST_F(Cli, ListShowsWhyBadPluginsFailed) {
  const Result r = run(std::string("list --plugin-dir ") + ATTNBENCH_BAD_PLUGIN_DIR);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("not loaded:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no factory"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("plugin ABI version 42"), std::string::npos) << r.output;
  const Result good = run("list");
  EXPECT_NE(good.output.find("flash"), std::string::npos) << good.output;
}

std::string report(const std::string& flash_ms) {
  std::string header, row;
  const auto columns = row_header();
  for (size_t i = 0; i < columns.size(); ++i) {
    header += (i ? "," : "") + columns[i];
    std::string v;
    if (columns[i] == "schema_version") v = std::to_string(kCsvSchemaVersion);
    if (columns[i] == "point_id") v = "p1";
    if (columns[i] == "backend") v = "flash";
    if (columns[i] == "timing_mode") v = "cold";
    if (columns[i] == "status") v = "ok";
    if (columns[i] == "time_ms_median") v = flash_ms;
    if (columns[i] == "time_rel_noise") v = "0.01";
    row += (i ? "," : "") + v;
  }
  return header + "\n" + row + "\n";
}

TEST_F(Cli, CompareFailsOnARegressionBeyondNoise) {
  const std::string base = write("base.csv", report("1.0")), slow = write("slow.csv", report("1.5"));
  const Result same = run("compare " + base + " " + base + " --fail-on-regression 5");
  EXPECT_EQ(same.code, 0) << same.output;
  const Result r = run("compare " + base + " " + slow + " --fail-on-regression 5 --markdown");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("| p1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 regression(s)"), std::string::npos) << r.output;
  EXPECT_EQ(run("compare " + base).code, 2);  // one report needs --baseline
  EXPECT_EQ(run("compare " + base + " " + write("bad.csv", "a,b\n1\n")).code, 2);
}

}  // namespace
}  // namespace attnbench
