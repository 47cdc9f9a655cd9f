// ATen operators per call, counted with RecordFunction callbacks on this thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attnbench {

struct OpCounts {
  std::vector<std::string> top_level;  // ops the call made itself, in order; views left out
  int64_t nested = 0;                  // every op at any depth, views included
  int64_t copies = 0;                  // aten::copy_ of more than one element, at any depth
};

// Runs `call` once with the callbacks installed and removes them after.
OpCounts count_aten_ops(const std::function<void()>& call);

}  // namespace attnbench
