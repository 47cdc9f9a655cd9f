// The kernels pass's trace turned into per-call counts and one entry per kernel: pure, no CUDA
// needed.
#pragma once

#include "measure/device/cupti_tracer.hpp"
#include "measure/pass_results.hpp"

#include <functional>
#include <optional>
#include <string>

namespace attnbench {

// Theoretical occupancy of a kernel record, in %; nullopt when it cannot be computed.
using OccupancyFn = std::function<std::optional<double>(const GpuActivity&)>;

// A grid or block as the kernel CSV and traces write it: "x,y,z". Inline: records/ (traces)
// uses it without linking the measurement library.
inline std::string launch_dims(const int v[3]) {
  return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
}

// Counts per call over trace.iterations calls (at least 1), and one KernelStat per (kind, name,
// grid, block), sorted by those.
KernelsResult kernel_records(const GpuTrace& trace, const OccupancyFn& occupancy);

}  // namespace attnbench
