// The worker's side of isolate/protocol.hpp, beside its client (worker_client.hpp): what
// `attnbench-measure worker` runs. It needs LibTorch, so it is built into attnbench_measure.
#pragma once

#include <string>
#include <vector>

namespace attnbench {

// Runs until stdin closes or the parent says quit. Every answer goes to `protocol_fd`; after a
// sticky CUDA error or an exception out of the runner it says so and exits at once (_Exit: no
// destructor touches a broken CUDA context), and the parent starts a fresh worker.
int worker_loop(const std::vector<std::string>& plugin_dirs, int protocol_fd);

}  // namespace attnbench
