// Issue "Under abuse", end to end: what a hostile but realistic user does to a run, and what the
// README promises: refused with exit 2 and a located message before anything is written, or
// measured with every row kept and the right exit code.
#include "cli_support.hpp"
#include "write/csv.hpp"
#include "write/report_writer.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

namespace attnbench {
namespace {

namespace fs = std::filesystem;
using test::Cli;
using test::plugin_folder;
using test::Result;
using test::rows_of;
using test::run;
using test::small_sweep;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A plugin that segfaults in a static initialiser, one that hangs there and one that aborts in its
// factory: `list` lists each with the reason and the good plugins still load; a run that names one
// gets its rows, saying why, and measures the others.
TEST_F(Cli, APluginThatDiesWhileLoadingCostsOnlyItsOwnBackend) {
  const std::string dirs = std::string("--plugin-dir ") + ATTNBENCH_PLUGIN_DIR + " --plugin-dir " +
                           ATTNBENCH_LOAD_FAULT_PLUGIN_DIR;
  const std::string env = "ATTNBENCH_PLUGIN_LOAD_TIMEOUT_S=3";
  const Result list = run("list " + dirs, env);
  EXPECT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find("\nnaive "), std::string::npos) << list.output;
  EXPECT_NE(list.output.find("attnbench_load_segv.so: the worker was killed by signal 11 (SIGSEGV"),
            std::string::npos)
      << list.output;
  EXPECT_NE(list.output.find("attnbench_load_abort.so: the worker was killed by signal 6 (SIGABRT"),
            std::string::npos)
      << list.output;
  EXPECT_NE(list.output.find("attnbench_load_hang.so: hung while loading (no progress within 3 s)"),
            std::string::npos)
      << list.output;

  const std::string config = write("c.yaml", small_sweep("naive, load_segv"));
  const Result r = run("run " + config + " " + dirs + " -o " + path("out.csv"), env);
  EXPECT_EQ(r.code, 1) << r.output;  // the lost backend's rows are errors
  const auto rows = rows_of(path("out.csv"));
  ASSERT_EQ(rows.size(), 4u) << r.output;
  for (const auto& [key, row] : rows) {
    if (row.at("backend") == "naive") {
      EXPECT_EQ(row.at("status"), "ok") << key;
    } else {
      EXPECT_EQ(row.at("status"), "error") << key;
      EXPECT_NE(row.at("reason").find("attnbench_load_segv.so the worker was killed by signal 11"),
                std::string::npos)
          << row.at("reason");
    }
  }
}

// A plugin that crashes while loading, in a folder whose name is not UTF-8: its name travels the
// protocol with the bad bytes replaced, and the next worker still knows to skip it (it restarted
// workers without end).
TEST_F(Cli, ACrashAtLoadInAFolderWhoseNameIsNotUtf8IsLeftOutOnce) {
  const std::string dir = path("plugins-\xff\xfe");
  std::filesystem::create_directories(dir);
  const std::string plugin = "/attnbench_load_segv.so";
  std::filesystem::copy_file(ATTNBENCH_LOAD_FAULT_PLUGIN_DIR + plugin, dir + plugin);
  const Result list = run("list --plugin-dir '" + dir + "'", "timeout 120");
  EXPECT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find("attnbench_load_segv.so: the worker was killed by signal 11 (SIGSEGV"),
            std::string::npos)
      << list.output;
}

// The README's own ATTNBENCH_PLUGIN_PATH=$PWD/build/plugins with build/attnbench: one folder
// reached twice is one folder, not "two plugins named naive".
TEST_F(Cli, AFolderReachedTwiceIsLoadedOnce) {
  const std::string dir = ATTNBENCH_PLUGIN_DIR;
  const std::string config = write("c.yaml", small_sweep("naive"));
  const Result r = run("run " + config + " --plugin-dir " + dir + " --plugin-dir " + dir +
                           "/. -o " + path("out.csv"),
                       "ATTNBENCH_PLUGIN_PATH=" + dir);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("two plugins"), std::string::npos) << r.output;
}

// A report and its side files are one unit: --force leaves no samples of another run beside the
// new report, a side file alone blocks a run without --force, and compare refuses samples that
// are not the report's.
TEST_F(Cli, AReportAndItsSideFilesAreOneUnit) {
  const std::string keep = write("keep.yaml", small_sweep("naive", "  keep_samples: true\n"));
  const std::string plain = write("plain.yaml", small_sweep("naive", "  keep_samples: false\n"));
  const std::string out = path("out.csv"), samples = path("out.samples.csv");
  ASSERT_EQ(run("run " + keep + " -o " + out).code, 0);
  ASSERT_TRUE(fs::exists(samples));
  const std::string first_samples = slurp(samples);
  ASSERT_EQ(run("run " + plain + " --force -o " + out).code, 0);
  EXPECT_FALSE(fs::exists(samples)) << "a stale samples file was left beside the new report";

  // Samples of one run beside another run's report: compare says they are not its own.
  ASSERT_EQ(run("run " + keep + " --force -o " + path("a.csv")).code, 0);
  ASSERT_EQ(run("run " + keep + " --force -o " + path("b.csv")).code, 0);
  std::ofstream(path("b.samples.csv")) << first_samples;
  const Result c = run("compare " + path("a.csv") + " " + path("b.csv"));
  EXPECT_EQ(c.code, 2) << c.output;
  EXPECT_NE(c.output.find("b.samples.csv does not belong to " + path("b.csv")), std::string::npos)
      << c.output;

  // Only a side file there: still the report there.
  fs::remove(path("a.csv"));
  const Result r = run("run " + keep + " -o " + path("a.csv"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(path("a.kernels.csv") + " exists"), std::string::npos) << r.output;
}

// A second run on an output that a run is writing is refused, naming the first's process.
TEST_F(Cli, ASecondRunOnALockedOutputIsRefusedNamingThePid) {
  const std::string config = write("c.yaml", small_sweep("naive"));
  const int fd = ::open(path("out.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  ASSERT_EQ(::write(fd, "4242\n", 5), 5);
  const Result r = run("run " + config + " --force -o " + path("out.csv"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find(path("out.csv") + " is being written by another attnbench run (pid 4242"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(path("out.csv")));
  ::close(fd);  // released: the run goes ahead
  EXPECT_EQ(run("run " + config + " --force -o " + path("out.csv")).code, 0);
}

// A full disk leaves a 0-byte report, or a header cut short: --resume starts over with a header.
TEST_F(Cli, ResumeOfAnEmptyOrTornReportStartsOverWithAHeader) {
  const std::string config = write("c.yaml", small_sweep("naive"));
  for (const std::string torn : {"", "schema_version,point_id,bac"}) {
    std::ofstream(path("out.csv")) << torn;
    const Result r = run("run " + config + " --resume -o " + path("out.csv"));
    EXPECT_EQ(r.code, 0) << r.output;
    const CsvTable t = read_csv(path("out.csv"));
    EXPECT_EQ(t.header.front(), "schema_version") << "'" << torn << "'";
    EXPECT_EQ(t.rows.size(), 2u) << "'" << torn << "'";
  }
}

// compare: nothing joined is not "no regression", and a time that is not a positive number is
// refused where it stands.
TEST_F(Cli, CompareRefusesNothingJoinedAndTimesThatAreNotTimes) {
  const std::string a = write("a.yaml", small_sweep("naive"));
  const std::string b = write("b.yaml", small_sweep("inplace"));
  ASSERT_EQ(run("run " + a + " -o " + path("a.csv")).code, 0);
  ASSERT_EQ(run("run " + b + " -o " + path("b.csv")).code, 0);
  const Result none =
      run("compare " + path("a.csv") + " " + path("b.csv") + " --fail-on-regression 5");
  EXPECT_EQ(none.code, 2) << none.output;
  EXPECT_NE(none.output.find("nothing to compare"), std::string::npos) << none.output;
  // plot refuses the same pair, and one report against a baseline it has no rows in common with,
  // before it draws (or needs matplotlib).
  const Result drawn = run("plot " + path("a.csv") + " " + path("b.csv") + " -o " + path("pl"));
  EXPECT_EQ(drawn.code, 2) << drawn.output;
  EXPECT_NE(drawn.output.find("plot: no (point, backend, timing mode) of " + path("b.csv")),
            std::string::npos)
      << drawn.output;
  EXPECT_FALSE(fs::exists(path("pl")));
  const Result self = run("compare " + path("a.csv") + " --baseline naive");
  EXPECT_EQ(self.code, 2) << self.output;
  EXPECT_NE(self.output.find("of the baseline 'naive': nothing to compare"), std::string::npos)
      << self.output;
  const Result self_plot = run("plot " + path("a.csv") + " --baseline naive -o " + path("pl1"));
  EXPECT_EQ(self_plot.code, 2) << self_plot.output;
  EXPECT_NE(self_plot.output.find("of the baseline 'naive': nothing to compare"), std::string::npos)
      << self_plot.output;
  EXPECT_FALSE(fs::exists(path("pl1")));

  CsvTable t = read_csv(path("a.csv"));
  const size_t c = static_cast<size_t>(t.column("time_ms_median"));
  for (const std::string bad : {"-0.05", "0", "nan"}) {
    CsvTable edited = t;
    edited.rows[1][c] = bad;
    {
      CsvWriter w(path("edited.csv"), edited.header);
      for (const auto& row : edited.rows) w.write(row);
    }
    const Result r = run("compare " + path("a.csv") + " " + path("edited.csv"));
    EXPECT_EQ(r.code, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find(path("edited.csv") + ":3: time_ms_median is " + bad), std::string::npos)
        << r.output;
  }
}

// A relation (naive copies more than inplace) needs inplace's row at the same point: a run resumed
// with inplace's rows, or two reports merged, judge it as one uninterrupted run does.
TEST_F(Cli, RelationPredictionsSeeTheRowsOfResumedRunsAndMergedReports) {
  const std::string config =
      write("c.yaml", small_sweep("naive, inplace") +
                          "expect:\n  naive:\n    aten_copies_per_call: {more_than: inplace}\n");
  auto naive_expectations = [&](const std::string& csv) {
    std::vector<std::string> out;
    for (const auto& [key, row] : rows_of(csv))
      if (row.at("backend") == "naive") out.push_back(row.at("expectation"));
    return out;
  };
  ASSERT_EQ(run("run " + config + " --backends naive -o " + path("r.csv")).code, 0);
  for (const auto& e : naive_expectations(path("r.csv")))
    EXPECT_NE(e.find("inplace has no row here"), std::string::npos) << e;
  const Result resumed = run("run " + config + " --resume -o " + path("r.csv"));
  EXPECT_EQ(resumed.code, 0) << resumed.output;
  EXPECT_EQ(naive_expectations(path("r.csv")), (std::vector<std::string>{"met", "met"}));

  ASSERT_EQ(run("run " + config + " --backends naive -o " + path("a.csv")).code, 0);
  ASSERT_EQ(run("run " + config + " --backends inplace -o " + path("b.csv")).code, 0);
  const Result merged = run("merge " + path("a.csv") + " " + path("b.csv") + " --config " + config +
                            " -o " + path("m.csv"));
  EXPECT_EQ(merged.code, 0) << merged.output;
  EXPECT_EQ(naive_expectations(path("m.csv")), (std::vector<std::string>{"met", "met"}));
}

bool process_alive_with(const std::string& marker) {
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string cmdline = slurp((entry.path() / "cmdline").string());
    if (cmdline.find("worker") != std::string::npos && cmdline.find(marker) != std::string::npos)
      return true;
  }
  return false;
}

// kill -9 of attnbench while its backend hangs: the worker goes with it.
TEST_F(Cli, TheWorkerDiesWithItsParent) {
  const std::string plugins = plugin_folder(dir_, {}, {});
  fs::copy(fs::path(ATTNBENCH_FAULT_PLUGIN_DIR) / "attnbench_fault_hang.so", plugins);
  const std::string config = write("c.yaml", small_sweep("fault_hang"));
  const std::string pid_file = path("pid");
  ASSERT_EQ(
      std::system((std::string(ATTNBENCH_EXE) + " run " + config + " --plugin-dir " + plugins +
                   " -o " + path("out.csv") + " >/dev/null 2>&1 & echo $! > " + pid_file)
                      .c_str()),
      0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const pid_t parent = std::stoi(slurp(pid_file));
  bool started = false;
  for (int i = 0; i < 300 && !started; ++i) {
    started = process_alive_with(plugins);
    if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(started) << "no worker appeared";
  std::this_thread::sleep_for(std::chrono::seconds(1));  // into the hanging call
  ASSERT_EQ(::kill(parent, SIGKILL), 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !process_alive_with(plugins);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(gone) << "the worker outlived its parent";
}

}  // namespace
}  // namespace attnbench
