// The rules between a run and its workers, with a stub worker (tests/stub_worker) that speaks the
// protocol and measures nothing: a worker that leaked memory retires and the next (point,
// backend) gets a fresh one; a sticky error or an exception out of the runner is a crashed row
// that names its pass, and costs only that row.
#include "isolate/worker_client.hpp"
#include "isolate/worker_server.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

namespace attnbench {
namespace {

Point cpu_point() {
  Point p;
  p.problem.heads = p.problem.kv_heads = 2;
  p.problem.seq_len = p.problem.seq_len_kv = 32;
  p.problem.head_dim = 16;
  p.id = "b1-h2-s32-d16-bf16-full-cpu";
  return p;
}

class Worker : public ::testing::Test {
 protected:
  WorkerClient client{ATTNBENCH_STUB_WORKER, BackendSources{}, 60};
  void SetUp() override { client.setup(RunOptions{}); }
  // The pid of the worker that answered, or why none did.
  std::string answered_by(const std::string& backend) {
    const WorkerAnswer a = client.measure(cpu_point(), backend, 30);
    if (!a.records) return to_string(a.status) + ": " + a.reason;
    return a.records->rows.at(0).device_index;
  }
};

TEST_F(Worker, ALeakRetiresTheWorkerAndTheNextRowGetsAFreshOne) {
  const std::string first = answered_by("plain");
  EXPECT_EQ(answered_by("plain"), first);
  EXPECT_EQ(answered_by("leaky"), first);  // answered by the worker that leaked ...
  const WorkerAnswer next = client.measure(cpu_point(), "plain", 30);
  ASSERT_TRUE(next.records) << next.reason;
  const std::string second = next.records->rows.at(0).device_index;
  EXPECT_NE(second, first);  // ... and the next row by another one, started for it: not the
  EXPECT_EQ(next.records->notes, "");  // retry after a worker that ended (the leaky one exits)
  EXPECT_EQ(client.starts(), 2);
  EXPECT_EQ(answered_by("plain"), second);  // which stays
  EXPECT_EQ(client.starts(), 2);
}

// Two workers at once (--devices: one a GPU): one that retires ends and reaps what it left,
// never the other's worker, which goes on answering as the same process.
TEST_F(Worker, AWorkerThatRetiresLeavesAnotherRunsWorkerAlone) {
  WorkerClient other{ATTNBENCH_STUB_WORKER, BackendSources{}, 60};
  other.setup(RunOptions{});
  const WorkerAnswer before = other.measure(cpu_point(), "plain", 30);
  ASSERT_TRUE(before.records) << before.reason;
  const std::string first = answered_by("plain");
  EXPECT_EQ(answered_by("leaky"), first);  // it retires: its worker ends and strays are reaped
  const WorkerAnswer after = other.measure(cpu_point(), "plain", 30);
  ASSERT_TRUE(after.records) << after.reason;
  EXPECT_EQ(after.records->rows.at(0).device_index, before.records->rows.at(0).device_index);
  EXPECT_EQ(after.records->notes, "");
  EXPECT_EQ(other.starts(), 1);
}

TEST_F(Worker, AStickyErrorOrAnExceptionIsACrashedRowNamingThePass) {
  const std::string first = answered_by("plain");
  EXPECT_EQ(answered_by("sticky"),
            "crashed: sticky CUDA error (cudaErrorIllegalAddress: planted) after pass 'first "
            "call'; the worker exited with code 3; the next (point, backend) gets a new worker");
  const std::string second = answered_by("plain");
  EXPECT_NE(second, first);
  EXPECT_EQ(second.find(':'), std::string::npos) << second;
  EXPECT_EQ(answered_by("throws"),
            "crashed: the worker failed after pass 'first call': planted in the runner; the "
            "worker exited with code 3; the next (point, backend) gets a new worker");
  EXPECT_EQ(answered_by("plain").find(':'), std::string::npos);
  EXPECT_EQ(client.starts(), 3);
}

// The worker's own half of the leak rule: after answering for a leaky backend it ends by itself,
// its stdin still open, so that what it kept is freed even by a parent that would not kill it.
// Backend code cannot reach the protocol: fd 3 and stdin are not the channel (the same worker
// answers after a backend closed fd 3 and read stdin). A worker whose channel was closed anyway
// and that keeps running is killed: a crashed row, not a run that waits for ever.
TEST_F(Worker, BackendCodeCannotReachTheChannelAndAHangUpIsNotAHang) {
  const std::string first = answered_by("plain");
  EXPECT_EQ(answered_by("closes_fd3"), first);
  EXPECT_EQ(answered_by("plain"), first);
  EXPECT_EQ(answered_by("hangs_up"),  // measured again alone, in case the others ended it
            "crashed: the worker closed its protocol channel and kept running (killed) in pass "
            "'first call' (as did the worker before, in which plain and closes_fd3 had run); the "
            "next (point, backend) gets a new worker");
  const std::string next = answered_by("plain");
  EXPECT_NE(next, first);
  EXPECT_EQ(next.find(':'), std::string::npos) << next;
}

// A backend whose thread ends the worker during the next backend's measurement: that backend is
// measured again in a fresh worker and its row is its own; the ending is charged to the one that
// ran before (its rows say so from then on, and its worker retires after each). A backend that
// ends its worker by itself is measured twice once (the fresh worker ends too), then not again.
TEST_F(Worker, AWorkerEndedByAnotherBackendsThreadIsChargedToIt) {
  const std::string first = answered_by("plain");
  EXPECT_EQ(answered_by("leaves_thread"), first);
  const WorkerAnswer victim = client.measure(cpu_point(), "plain", 30);
  ASSERT_TRUE(victim.records) << victim.reason;
  const Row& row = victim.records->rows.at(0);
  EXPECT_EQ(row.status, Status::ok);
  EXPECT_NE(row.device_index, first);
  EXPECT_FALSE(row.has_flag(Flag::ended_a_worker)) << row.flags;
  EXPECT_EQ(victim.records->notes,
            "the first worker to measure it ended (the worker exited with code 9 in pass 'first "
            "call') after leaves_thread had run in it; measured again in a fresh worker, and the "
            "ending is charged to leaves_thread (flag ended_a_worker from here on)");
  EXPECT_EQ(client.starts(), 2);

  const WorkerAnswer charged = client.measure(cpu_point(), "leaves_thread", 30);
  ASSERT_TRUE(charged.records) << charged.reason;
  EXPECT_TRUE(charged.records->rows.at(0).has_flag(Flag::ended_a_worker));
  EXPECT_EQ(charged.records->rows.at(0).device_index, row.device_index);
  const std::string after = answered_by("plain");  // a worker of its own: no ending, no retry
  EXPECT_NE(after, row.device_index);
  EXPECT_EQ(after.find(':'), std::string::npos) << after;
  EXPECT_EQ(client.starts(), 3);
  EXPECT_FALSE(client.measure(cpu_point(), "plain", 30).records->rows.at(0).has_flag(
      Flag::ended_a_worker));
}

TEST_F(Worker, ABackendThatEndsItsOwnWorkerIsMeasuredTwiceOnceThenNotAgain) {
  answered_by("plain");
  EXPECT_EQ(answered_by("crashes"),
            "crashed: the worker exited with code 11 in pass 'first call' (as did the worker "
            "before, in which plain had run); the next (point, backend) gets a new worker");
  EXPECT_EQ(client.starts(), 2);  // the second, fresh, ended too
  answered_by("plain");
  EXPECT_EQ(answered_by("crashes"),
            "crashed: the worker exited with code 11 in pass 'first call'; the next (point, "
            "backend) gets a new worker");
  EXPECT_EQ(client.starts(), 3);
  EXPECT_EQ(answered_by("plain").find(':'), std::string::npos);
  EXPECT_EQ(client.starts(), 4);
}

TEST(WorkerServer, EndsByItselfAfterALeak) {
  int in[2], out[2];
  ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 3);
    ::execl(ATTNBENCH_STUB_WORKER, ATTNBENCH_STUB_WORKER, "worker", "--protocol-fd", "3",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  const std::string requests =
      setup_message(RunOptions{}) + "\n" + measure_message(cpu_point(), "leaky") + "\n";
  ASSERT_EQ(::write(in[1], requests.data(), requests.size()),
            static_cast<ssize_t>(requests.size()));
  std::string answers;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  bool ended = false;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{out[0], POLLIN, 0};
    if (::poll(&pfd, 1, 100) <= 0) continue;
    char chunk[4096];
    const ssize_t n = ::read(out[0], chunk, sizeof chunk);
    if (n <= 0) {
      ended = true;  // end of file: the worker closed its channel, exiting
      break;
    }
    answers.append(chunk, static_cast<size_t>(n));
  }
  ::close(in[1]);
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(ended) << "the worker kept running after a leak; it sent: " << answers;
  EXPECT_NE(answers.find("\"type\":\"records\""), std::string::npos) << answers;
  EXPECT_NE(answers.find("leaked_device_memory"), std::string::npos) << answers;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace attnbench
