// The worker's side of isolate/protocol.hpp, beside its client (worker_client.hpp): what
// `attnbench-measure worker` runs. It needs LibTorch, so it is built into attnbench_measure.
#pragma once

#include "plugins/backend_kind.hpp"

#include <string>
#include <vector>

namespace attnbench {

// Runs until stdin closes or the parent says quit. Every answer goes to `protocol_fd`; after a
// sticky CUDA error or an exception out of the runner it says so and exits at once (_Exit: no
// destructor touches a broken CUDA context), and the parent starts a fresh worker. `skip`: plugin
// files (and other kinds' ids) not to load: they took an earlier worker down while loading.
// The worker dies with its parent, whatever ended the parent.
int worker_loop(const BackendSources& sources, const std::vector<std::string>& skip,
                int protocol_fd);

}  // namespace attnbench
