// ATen operators per call, counted with RecordFunction callbacks on this thread only.
#pragma once

#include "measure/pass_results.hpp"

#include <functional>

namespace attnbench {

// Runs `call` once with the callbacks installed and removes them after.
OpCounts count_aten_ops(const std::function<void()>& call);

}  // namespace attnbench
