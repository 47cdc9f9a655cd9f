// The run --devices queue (run/scheduler.hpp) with measurers that stand for one GPU each: no GPU
// is needed to check that every job is measured once, by one of them, and that its rows say which.
#include "base/errors.hpp"
#include "run/run_sweep.hpp"
#include "run/scheduler.hpp"
#include "write/csv.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace attnbench {
namespace {

namespace fs = std::filesystem;

// Measures nothing: a row per call, and a count of what it was asked. `fail_at`: throws on its
// n-th call (1-based), as a measurer whose worker could not be restarted does. `wait_for`: each
// call first waits (up to 10 s) for that flag, so that another measurer surely takes a job.
class CountingMeasurer : public Measurer {
 public:
  // fail_at: the call that throws (0: none), setting *failed; wait_for: each call waits until it
  // is set; entered: set when a call begins; fail_after: the throwing call waits until it is set.
  explicit CountingMeasurer(int fail_at = 0, std::atomic<bool>* failed = nullptr,
                            const std::atomic<bool>* wait_for = nullptr,
                            std::atomic<bool>* entered = nullptr,
                            const std::atomic<bool>* fail_after = nullptr)
      : fail_at_(fail_at),
        failed_(failed),
        wait_for_(wait_for),
        entered_(entered),
        fail_after_(fail_after) {}
  const HostInfo& host() const override { return host_; }
  std::vector<std::string> backend_names() const override { return {"a", "b"}; }
  const std::vector<LoadFailure>& failures() const override { return failures_; }
  std::string backend_build(const std::string&) const override { return ""; }
  void setup(const RunOptions&) override {}
  BackendRecords measure(const Point& point, const std::string& backend) override {
    if (entered_) *entered_ = true;
    wait(wait_for_);
    if (++calls == fail_at_) {
      wait(fail_after_);
      if (failed_) *failed_ = true;
      throw std::runtime_error("worker lost");
    }
    BackendRecords r;
    r.point_id = point.id, r.backend = backend;
    Row row;
    row.point_id = point.id, row.backend = backend;
    r.rows.push_back(row);
    return r;
  }
  std::atomic<int> calls{0};

 private:
  // Until `flag` is set, or 30 s (a test that hangs is no better than one that fails).
  static void wait(const std::atomic<bool>* flag) {
    for (int i = 0; flag && !*flag && i < 3000; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  int fail_at_;
  std::atomic<bool>* failed_;
  const std::atomic<bool>* wait_for_;
  std::atomic<bool>* entered_;
  const std::atomic<bool>* fail_after_;
  HostInfo host_;
  std::vector<LoadFailure> failures_;
};

struct Queue {
  RunPlan plan;
  std::vector<Job> jobs;
  std::map<std::pair<int, std::string>, std::set<std::string>> expected;

  Queue(int points, int repetitions) {
    plan.config.measurement.repetitions = repetitions;
    for (int p = 0; p < points; ++p) {
      Point point;
      point.id = "p" + std::to_string(p);
      plan.points.push_back(point);
      for (const std::string b : {"a", "b"}) plan.tasks.push_back({size_t(p), b});
    }
    for (int rep = 0; rep < repetitions; ++rep)
      for (const Task& t : plan.tasks) {
        jobs.push_back({rep, &t});
        expected[{rep, plan.points[t.point].id}].insert(t.backend);
      }
  }
};

class Scheduler : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("attnbench_scheduler_" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    for (const auto& f : fs::directory_iterator(dir_)) fs::remove(f.path());
    fs::remove(dir_);
  }
  std::string report() const { return (dir_ / "r.csv").string(); }
  // Drains `q` into report() as a run does.
  void run_queue(const Queue& q, const std::vector<std::unique_ptr<Measurer>>& measurers,
                 const std::vector<std::string>& devices) {
    std::ostringstream log;
    Progress progress(q.jobs.size(), log, false);
    ReportWriter writer(report(), false, false);
    const Expectations none;
    JudgingWriter judged(writer, none, q.expected);
    run_jobs(q.jobs, q.plan, measurers, devices, progress, judged);
  }
  fs::path dir_;
};

TEST_F(Scheduler, EveryJobIsMeasuredOnceByOneDeviceAndItsRowsSayWhich) {
  Queue q(5, 2);
  std::vector<std::unique_ptr<Measurer>> measurers;
  measurers.push_back(std::make_unique<CountingMeasurer>());
  measurers.push_back(std::make_unique<CountingMeasurer>());
  run_queue(q, measurers, {"0", "3"});
  const int first = static_cast<CountingMeasurer&>(*measurers[0]).calls;
  const int second = static_cast<CountingMeasurer&>(*measurers[1]).calls;
  EXPECT_EQ(first + second, 20);
  const CsvTable t = read_csv(report());
  ASSERT_EQ(t.rows.size(), 20u);
  std::map<std::string, int> by_device;
  std::set<std::string> keys;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    ++by_device[t.at(i, "device_index")];
    keys.insert(t.at(i, "point_id") + "/" + t.at(i, "backend") + "/" + t.at(i, "repetition"));
  }
  EXPECT_EQ(keys.size(), 20u) << "each (point, backend, repetition) once";
  for (const auto& [device, rows] : by_device)
    EXPECT_TRUE(device == "0" || device == "3") << "a row of device '" << device << "'";
  EXPECT_EQ(by_device.count("0") ? by_device.at("0") : 0, first);
  EXPECT_EQ(by_device.count("3") ? by_device.at("3") : 0, second);
}

TEST_F(Scheduler, OneMeasurerRunsTheQueueInOrderWithoutADevice) {
  Queue q(3, 1);
  std::vector<std::unique_ptr<Measurer>> measurers;
  measurers.push_back(std::make_unique<CountingMeasurer>());
  run_queue(q, measurers, {});
  const CsvTable t = read_csv(report());
  ASSERT_EQ(t.rows.size(), 6u);
  for (size_t i = 0; i < t.rows.size(); ++i) {
    EXPECT_EQ(t.at(i, "device_index"), "");
    EXPECT_EQ(t.at(i, "point_id"), "p" + std::to_string(i / 2));
    EXPECT_EQ(t.at(i, "backend"), i % 2 ? "b" : "a");
  }
}

// The healthy measurer holds its first job until the other has thrown on its own first (which
// waits until the healthy one has taken its job: else the queue could stop before it took any):
// then it finishes that job and takes no other.
TEST_F(Scheduler, AMeasurerThatThrowsStopsTheQueueAndTheErrorReachesTheRun) {
  Queue q(50, 1);
  std::atomic<bool> failed{false}, healthy_took_one{false};
  std::vector<std::unique_ptr<Measurer>> measurers;
  measurers.push_back(
      std::make_unique<CountingMeasurer>(0, nullptr, &failed, &healthy_took_one));
  measurers.push_back(
      std::make_unique<CountingMeasurer>(1, &failed, nullptr, nullptr, &healthy_took_one));
  try {
    run_queue(q, measurers, {"0", "1"});
    FAIL() << "the error was swallowed";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "worker lost");
  }
  EXPECT_EQ(static_cast<CountingMeasurer&>(*measurers[0]).calls, 1)
      << "the healthy measurer went on after the error";
  EXPECT_EQ(static_cast<CountingMeasurer&>(*measurers[1]).calls, 1);
  const CsvTable t = read_csv(report());
  EXPECT_EQ(t.rows.size(), 1u) << "the job measured before the error is written";
}

// --devices against a machine of two GPUs (no GPU needed: the host is made here): each GPU by its
// number, once; one it lacks, a number past int, or a machine with none refused, saying which.
TEST(DeviceList, EachGpuOnceByItsNumberAndOnlyThoseTheMachineHas) {
  HostInfo two;
  two.cuda_device_count = 2;
  EXPECT_EQ(device_list("1,0", two), (std::vector<std::string>{"1", "0"}));
  EXPECT_EQ(device_list("01", two), (std::vector<std::string>{"1"}));
  EXPECT_EQ(device_list("all", two), (std::vector<std::string>{"0", "1"}));
  const auto refused = [&](const std::string& text, const HostInfo& host, const std::string& words) {
    try {
      device_list(text, host);
      ADD_FAILURE() << text << " was taken";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << text << ": " << e.what();
    }
  };
  refused("0,0", two, "--devices: GPU 0 is listed twice");
  refused("0,00", two, "--devices: GPU 0 is listed twice");
  refused("1,0,1", two, "--devices: GPU 1 is listed twice");
  refused("2", two, "--devices: GPU 2 does not exist (this machine has 2)");
  refused("1", HostInfo{}, "--devices: GPU 1 does not exist (this machine has no GPU)");
  refused("99999999999", two, "--devices: GPU 99999999999 does not exist (this machine has 2)");
  refused("0,,1", two, "expected GPU numbers like 0,1 or 'all', got '0,,1'");
  refused("-1", two, "expected GPU numbers");
  refused("all", HostInfo{}, "--devices all: this machine has no GPU");
}

}  // namespace
}  // namespace attnbench
