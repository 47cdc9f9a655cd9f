// A worker that measures nothing: the protocol's worker side (isolate/worker_server) with canned
// answers, so that the rules of retiring a worker and of fatal errors are tested without LibTorch.
// Backends: plain (an ok row), leaky (2 GiB left reserved), sticky (a sticky CUDA error), throws
// (an exception out of the runner), closes_fd3 (closes fd 3 and reads stdin, as a Python backend
// might, then an ok row), hangs_up (closes every descriptor from 3 up, the channel's too, and
// waits for ever), leaves_thread (an ok row, and a thread left running that ends the process
// during the next backend's measurement, as a Python backend's timer might), crashes (ends its
// process every time). Each row's device_index is the worker's pid.
#include "isolate/worker_server.hpp"
#include "records/assemble.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace attnbench {
namespace {

const std::vector<std::string> kBackends = {"plain",      "leaky",    "sticky",        "throws",
                                            "closes_fd3", "hangs_up", "leaves_thread", "crashes"};

std::atomic<bool> another_measures{false};  // leaves_thread's thread waits for it

class StubSide final : public WorkerSide {
 public:
  Hello start(const std::function<void(const std::string&)>&) override {
    Hello hello;
    hello.host.device_name = "stub";
    for (const auto& name : kBackends) hello.backends.push_back({name, "stub backend", "(stub)"});
    return hello;
  }
  void setup(const RunOptions& options) override { options_ = options; }
  bool has_backend(const std::string& backend) const override {
    return std::find(kBackends.begin(), kBackends.end(), backend) != kBackends.end();
  }
  BackendRecords measure(const Point& point, const std::string& backend) override {
    options_.on_pass("first call");
    if (backend == "crashes") std::_Exit(11);
    if (backend == "leaves_thread") {
      std::thread([] {
        while (!another_measures) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        std::_Exit(9);
      }).detach();
      left_thread_ = true;
    } else if (left_thread_) {
      another_measures = true;
      ::pause();  // the thread ends this process
    }
    if (backend == "throws") throw std::runtime_error("planted in the runner");
    if (backend == "sticky") broken_ = "cudaErrorIllegalAddress: planted";
    if (backend == "closes_fd3") {
      ::close(3);
      char c;
      if (::read(STDIN_FILENO, &c, 1) != 0) throw std::runtime_error("stdin was not empty");
    }
    if (backend == "hangs_up") {
      for (int fd = 3; fd < 1024; ++fd) ::close(fd);
      ::pause();
    }
    PassResults results;
    results.reserved_left_mib = backend == "leaky" ? 2048 : 16;
    BackendRecords out =
        assemble_records(row_setup(point.id, point.problem, backend, options_), results);
    for (Row& row : out.rows) row.device_index = std::to_string(::getpid());
    return out;
  }
  std::optional<std::string> broken() const override { return broken_; }

 private:
  RunOptions options_;
  std::optional<std::string> broken_;
  bool left_thread_ = false;
};

}  // namespace
}  // namespace attnbench

int main(int argc, char** argv) {
  int fd = 3;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--protocol-fd") fd = std::atoi(argv[i + 1]);
  attnbench::StubSide side;
  return attnbench::serve_worker(side, fd);
}
