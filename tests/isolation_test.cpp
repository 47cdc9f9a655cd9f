// Isolated workers, end to end: faults contained to their own rows, no silent overwrite, resume.
#include "cli_support.hpp"

#include <csignal>
#include <fstream>
#include <set>
#include <thread>

namespace attnbench {
namespace {

namespace fs = std::filesystem;
using test::Cli;
using test::keys;
using test::plugin_folder;
using test::Result;
using test::Rows;
using test::rows_of;
using test::run;
using test::small_sweep;

const std::vector<std::string> kFaults = {"segv",   "abort", "exit",  "hang",
                                          "throws", "nan",   "shape", "garble"};
const std::vector<std::string> kCudaFaults = {"cuda_illegal_address", "cuda_assert"};

// The fault test's sweep: bf16 on whatever device this machine has, a worker timeout of 4 s.
std::string config(const std::string& backends) {
  return small_sweep(backends, "  timeout_s: 4\n", "bf16", "auto");
}

std::string joined(const std::vector<std::string>& names, const std::string& prefix) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + prefix + n;
  return out;
}

// The fault plugins fire at seq_len 48 only: at 32 they are correct, and every other backend's rows
// must be as in a run without them.
TEST_F(Cli, EveryFaultIsContainedToItsOwnRows) {
  const std::string dir = plugin_folder(dir_, {"naive", "inplace"}, {ATTNBENCH_FAULT_PLUGIN_DIR});
  const std::string all =
      "naive, " + joined(kFaults, "fault_") + ", " + joined(kCudaFaults, "fault_") + ", inplace";
  const Result faulty = run("run " + write("f.yaml", config(all)) + " --no-summary --plugin-dir " +
                                dir + " -o " + path("faulty.csv"),
                            "ATTNBENCH_FAULT_SEQ_LEN=48");
  EXPECT_EQ(faulty.code, 1) << faulty.output;
  const Result clean = run("run " + write("c.yaml", config("naive, inplace")) +
                           " --no-summary --plugin-dir " + dir + " -o " + path("clean.csv"));
  ASSERT_EQ(clean.code, 0) << clean.output;
  const Rows rows = rows_of(path("faulty.csv")), reference = rows_of(path("clean.csv"));
  const bool cuda = rows.begin()->second.at("device") == "cuda";

  for (const auto& [key, want] : reference) {  // naive and inplace, before and after every fault
    const auto& got = rows.at(key);
    EXPECT_EQ(got.at("status"), "ok") << key << ": " << got.at("reason");
    for (const char* column : {"rel_err", "aten_ops_per_call", "aten_copies_per_call",
                               "kernels_per_call", "memcpy_per_call", "memset_per_call"})
      EXPECT_EQ(got.at(column), want.at(column)) << key << " " << column;
  }
  auto row = [&](const std::string& backend,
                 int seq_len) -> const std::map<std::string, std::string>& {
    for (const auto& [key, r] : rows)
      if (r.at("backend") == backend && r.at("seq_len") == std::to_string(seq_len)) return r;
    throw std::runtime_error("no row for " + backend);
  };
  for (const auto& f : kFaults)
    EXPECT_EQ(row("fault_" + f, 32).at("status"), "ok") << f;  // not firing

  auto expect = [&](const std::string& fault, const std::string& status,
                    const std::string& reason) {
    const auto& r = row("fault_" + fault, 48);
    EXPECT_EQ(r.at("status"), status) << fault << ": " << r.at("reason");
    EXPECT_NE(r.at("reason").find(reason), std::string::npos) << fault << ": " << r.at("reason");
  };
  // A crashed or hung row names the code that crashed, as its working rows do.
  for (const char* f : {"segv", "abort", "exit", "hang"}) {
    const std::string build = row(std::string("fault_") + f, 32).at("backend_build");
    EXPECT_EQ(build.rfind("so:", 0), 0u) << f << ": " << build;
    EXPECT_EQ(row(std::string("fault_") + f, 48).at("backend_build"), build) << f;
  }
  expect("segv", "crashed", "the worker was killed by signal 11 (SIGSEGV");
  expect("segv", "crashed", "in pass 'first call'");
  expect("abort", "crashed", "the worker was killed by signal 6 (SIGABRT");
  expect("exit", "crashed", "the worker exited with code 7 in pass 'first call'");
  expect("hang", "timeout", "no answer within 4 s (measurement.timeout_s) in pass 'first call'");
  expect("throws", "error", "first call: the backend threw");
  expect("nan", "wrong", "the output has non-finite values");
  expect("shape", "error", "correctness: output has shape");
  // fd 3, where the worker once answered, is not its channel any more: nothing to garble.
  EXPECT_EQ(row("fault_garble", 48).at("status"), "ok") << row("fault_garble", 48).at("reason");
  if (cuda) {
    expect("cuda_illegal_address", "crashed", "sticky CUDA error (cudaErrorIllegalAddress");
    expect("cuda_assert", "crashed", "sticky CUDA error (cudaErrorAssert");
  } else {
    for (const auto& f : kCudaFaults)
      EXPECT_EQ(row("fault_" + f, 48).at("status"), "unsupported") << f;
  }
}

TEST_F(Cli, AnExistingReportIsNeverOverwrittenSilently) {
  const std::string yaml = write("o.yaml", config("naive"));
  ASSERT_EQ(run("run " + yaml + " --no-summary -o " + path("o.csv")).code, 0);
  const auto before = fs::last_write_time(path("o.csv"));
  const Result again = run("run " + yaml + " --no-summary -o " + path("o.csv"));
  EXPECT_EQ(again.code, 2) << again.output;
  EXPECT_NE(again.output.find(path("o.csv") +
                              " exists: --resume measures only what the report lacks and "
                              "appends, --force overwrites the report and its side files"),
            std::string::npos)
      << again.output;
  EXPECT_EQ(fs::last_write_time(path("o.csv")), before);
  EXPECT_EQ(run("run " + yaml + " --no-summary --force -o " + path("o.csv")).code, 0);
  EXPECT_EQ(rows_of(path("o.csv")).size(), 2u);
}

TEST_F(Cli, InProcessRunsGiveTheSameRows) {
  const std::string yaml = write("p.yaml", config("naive, inplace"));
  ASSERT_EQ(run("run " + yaml + " --no-summary -o " + path("w.csv")).code, 0);
  ASSERT_EQ(run("run " + yaml + " --no-summary --isolation none -o " + path("n.csv")).code, 0);
  const Rows w = rows_of(path("w.csv")), n = rows_of(path("n.csv"));
  ASSERT_EQ(keys(w), keys(n));
  for (const auto& [key, row] : w)
    for (const char* column : {"status", "rel_err", "aten_ops", "aten_copies_per_call",
                               "kernels_per_call", "backend_build"})
      EXPECT_EQ(row.at(column), n.at(key).at(column)) << key << " " << column;
  // And resumed in this process: the same code, so the kept rows stay and the rest is measured.
  std::ifstream in(path("n.csv"));
  std::string header, first;
  std::getline(in, header), std::getline(in, first);
  std::ofstream(path("n.csv"), std::ios::trunc) << header << '\n' << first << '\n';
  const Result resumed =
      run("run " + yaml + " --no-summary --isolation none --resume -o " + path("n.csv"));
  EXPECT_EQ(resumed.code, 0) << resumed.output;
  EXPECT_EQ(rows_of(path("n.csv")).size(), w.size()) << resumed.output;
}

// Keys of every file of a report, each (point, backend) counted once per row.
struct Keys {
  std::multiset<std::string> rows, kernel_owners, sample_owners;
};
Keys report_keys(const std::string& csv) {
  Keys k;
  for (const auto& [key, row] : rows_of(csv)) k.rows.insert(key);
  auto owners = [](const std::string& path, std::multiset<std::string>& into) {
    if (!fs::exists(path)) return;
    const CsvTable t = read_csv(path);
    for (size_t r = 0; r < t.rows.size(); ++r)
      into.insert(t.at(r, "point_id") + " " + t.at(r, "backend"));
  };
  owners(csv.substr(0, csv.size() - 4) + ".kernels.csv", k.kernel_owners);
  owners(csv.substr(0, csv.size() - 4) + ".samples.csv", k.sample_owners);
  return k;
}

TEST_F(Cli, AKilledRunResumesToTheSameKeysNoneTwice) {
  std::string yaml_text = config("naive, inplace");
  yaml_text.replace(yaml_text.find("  timeout_s: 4\n"), 14,
                    "  timeout_s: 4\n  keep_samples: true\n");
  yaml_text.replace(yaml_text.find("seq_len: [32, 48]"), 17,
                    "seq_len: [16, 24, 32, 40, 48, 56, 64, 72]");
  const std::string yaml = write("k.yaml", yaml_text);
  ASSERT_EQ(run("run " + yaml + " --no-summary -o " + path("full.csv")).code, 0);
  const Keys full = report_keys(path("full.csv"));
  ASSERT_EQ(full.rows.size(), 16u);

  // kill -9 once the report has a few rows, then --resume.
  const std::string killed = path("killed.csv");
  const pid_t pid = fork();
  if (pid == 0) {
    execl(ATTNBENCH_EXE, ATTNBENCH_EXE, "run", yaml.c_str(), "--no-summary", "-o", killed.c_str(),
          nullptr);
    _exit(127);
  }
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::ifstream in(killed);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (std::count(text.begin(), text.end(), '\n') >= 4) break;
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const Result resumed = run("run " + yaml + " --no-summary --resume -o " + killed);
  ASSERT_EQ(resumed.code, 0) << resumed.output;
  const Keys after = report_keys(killed);
  EXPECT_EQ(after.rows, full.rows);  // a multiset: a key written twice would show
  EXPECT_EQ(std::set<std::string>(after.kernel_owners.begin(), after.kernel_owners.end()),
            std::set<std::string>(full.kernel_owners.begin(), full.kernel_owners.end()));
  // Every sample row belongs to a (point, backend) of the report, as many as its rows say.
  std::map<std::string, size_t> samples_said;
  for (const auto& [key, row] : rows_of(killed))
    samples_said[row.at("point_id") + " " + row.at("backend")] += std::stoul(row.at("samples"));
  for (const auto& [owner, n] : samples_said)
    EXPECT_EQ(after.sample_owners.count(owner), n) << owner;
}

TEST_F(Cli, ResumeRefusesAnotherSweep) {
  ASSERT_EQ(
      run("run " + write("a.yaml", config("naive")) + " --no-summary -o " + path("r.csv")).code, 0);
  std::string other = config("naive");
  other.replace(other.find("max_samples: 5"), 14, "max_samples: 6");
  const Result r =
      run("run " + write("b.yaml", other) + " --no-summary --resume -o " + path("r.csv"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(path("r.csv") +
                          ": cannot resume: it was written by another sweep (config fingerprint "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--force starts it over, or give another -o"), std::string::npos)
      << r.output;
  const Result same = run("run " + write("a2.yaml", config("naive")) +
                          " --no-summary --resume -o " + path("r.csv"));
  EXPECT_EQ(same.code, 0) << same.output;
  EXPECT_NE(same.output.find("2 (point, backend) done"), std::string::npos) << same.output;
  EXPECT_EQ(rows_of(path("r.csv")).size(), 2u);
}

}  // namespace
}  // namespace attnbench
