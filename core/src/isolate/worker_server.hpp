// The worker's half of the protocol (protocol.hpp), apart from what it measures with: the hello,
// then one answer per request until stdin closes or the parent says quit. worker_loop.cpp serves
// it with plugins and the runner (LibTorch); tests serve it with a stub, so that the rules here
// (when a worker retires, what is fatal) are tested without a GPU.
#pragma once

#include "isolate/protocol.hpp"

#include <functional>
#include <optional>
#include <string>

namespace attnbench {

// What a worker measures with.
class WorkerSide {
 public:
  virtual ~WorkerSide() = default;
  // Loads the backends (`send` takes a protocol line: a `loading` message before each, so that a
  // crash while loading names its file) and says what there is.
  virtual Hello start(const std::function<void(const std::string& line)>& send) = 0;
  // `options.on_pass` is set: the side calls it as each pass starts.
  virtual void setup(const RunOptions& options) = 0;
  virtual bool has_backend(const std::string& backend) const = 0;
  // Throws only what leaves the worker unable to go on (an exception out of the runner).
  virtual BackendRecords measure(const Point& point, const std::string& backend) = 0;
  // A sticky CUDA error, when there is one: nothing more can run in this process.
  virtual std::optional<std::string> broken() const = 0;
};

// Runs until stdin closes or the parent says quit; answers on `protocol_fd`. After a sticky error
// or an exception it sends `fatal` and exits at once (_Exit: no destructor touches a broken CUDA
// context); after records flagged leaked_device_memory it returns, so that its memory goes with
// it and the parent starts a fresh worker. The worker dies with its parent
// ($ATTNBENCH_WORKER_PARENT), whatever ended the parent.
int serve_worker(WorkerSide& side, int protocol_fd);

}  // namespace attnbench
