// The kernels pass's trace turned into per-call counts and kernel rows: pure, no CUDA needed.
#pragma once

#include "measure/device/cupti_tracer.hpp"
#include "measure/pass_results.hpp"

#include <functional>
#include <optional>
#include <string>

namespace attnbench {

// Theoretical occupancy of a kernel record, in %; nullopt when it cannot be computed.
using OccupancyFn = std::function<std::optional<double>(const GpuActivity&)>;

// A grid or block as the kernel CSV and traces write it: "x,y,z".
std::string launch_dims(const int v[3]);

// Counts per call over trace.iterations calls (at least 1), and one kernel row per (kind, name,
// grid, block), sorted by those; the rows' point_id, backend and run are left to the assembly.
KernelsResult kernel_records(const GpuTrace& trace, const OccupancyFn& occupancy);

}  // namespace attnbench
