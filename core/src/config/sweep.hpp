// Expands a SweepConfig into the ordered list of points to measure.
#pragma once

#include "config/config.hpp"

#include <attnbench/backend.hpp>

#include <string>
#include <vector>

namespace attnbench {

struct Point {
  Problem problem;
  std::string id;  // point_id(problem)
};

// Cartesian product of the free axes and the zip groups, in file order: the first written varies
// slowest, the last fastest; the zip groups stand where `zip:` is written. `cuda_available`
// resolves device "auto". Axes left out take their defaults: batch 1, heads 1, kv_heads = heads,
// seq_len_kv = seq_len, head_dim 64, dtype bf16, causal true, device auto, direction fwd.
std::vector<Point> expand_sweep(const SweepConfig& config, bool cuda_available);

}  // namespace attnbench
