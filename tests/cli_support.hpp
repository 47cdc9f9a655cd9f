// Running the attnbench executable from tests: exit code and output, a temporary folder per test,
// and a report's rows keyed for assertions.
#pragma once

#include "write/csv.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace attnbench::test {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string output;  // stdout and stderr
};

// `env`: assignments put before the command ("ATTNBENCH_FAULT_SEQ_LEN=48").
inline Result run(const std::string& args, const std::string& env = "") {
  const std::string command =
      env + (env.empty() ? "" : " ") + std::string(ATTNBENCH_EXE) + " " + args + " 2>&1";
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
    dir_ = fs::temp_directory_path() /
           ("attnbench-cli-" + std::to_string(::getpid()) + "-" +
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

using Rows = std::map<std::string, std::map<std::string, std::string>>;

// Rows of a report, for assertions: (point_id, backend, timing_mode) -> column -> value.
inline Rows rows_of(const std::string& csv) {
  const CsvTable t = read_csv(csv);
  Rows out;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    auto& row = out[t.at(r, "point_id") + " " + t.at(r, "backend") + " " + t.at(r, "timing_mode")];
    for (size_t c = 0; c < t.header.size(); ++c) row[t.header[c]] = t.rows[r][c];
  }
  return out;
}

inline std::vector<std::string> keys(const Rows& rows) {
  std::vector<std::string> out;
  for (const auto& [k, v] : rows) out.push_back(k);
  return out;
}

// Two small points (seq_len 32 and 48) measured in well under a second each: `backends`, extra
// `measurement:` lines, and the points' dtype and device.
inline std::string small_sweep(const std::string& backends,
                               const std::string& extra_measurement = "",
                               const std::string& dtype = "fp32",
                               const std::string& device = "cpu") {
  return "backends: [" + backends +
         "]\nmeasurement:\n  warmup_ms: 1\n  min_samples: 3\n  max_samples: 5\n  min_time_s: 0\n"
         "  max_time_s: 0.05\n  cpu_pass_calls: 3\n  kernel_pass_iterations: 1\n" +
         extra_measurement +
         "sweep:\n  heads: 2\n  seq_len: [32, 48]\n  head_dim: 16\n  dtype: " + dtype +
         "\n  device: " + device + "\n";
}

// A plugin folder in `dir`: the named bundled plugins and every library of the `extra` folders.
inline std::string plugin_folder(const fs::path& dir, const std::vector<std::string>& bundled,
                                 const std::vector<std::string>& extra) {
  const fs::path plugins = dir / "plugins";
  fs::create_directories(plugins);
  for (const auto& name : bundled)
    fs::copy(fs::path(ATTNBENCH_PLUGIN_DIR) / ("attnbench_" + name + ".so"), plugins);
  for (const auto& folder : extra)
    for (const auto& entry : fs::directory_iterator(folder)) fs::copy(entry.path(), plugins);
  return plugins.string();
}

}  // namespace attnbench::test
