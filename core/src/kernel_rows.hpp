// GPU activity of traced calls turned into per-call counts and kernel rows: pure, no CUDA needed.
#pragma once

#include "cupti_tracer.hpp"
#include "row.hpp"

#include <functional>
#include <optional>
#include <vector>

namespace attnbench {

struct ActivityCounts {
  double kernels_per_call = 0, memcpy_per_call = 0, memset_per_call = 0;
};

struct TraceRecords {
  ActivityCounts counts;
  // One per (kind, name, grid, block), sorted by those; point_id, backend and run are the caller's.
  std::vector<KernelRow> kernels;
};

// Theoretical occupancy of a kernel record, in %; nullopt when it cannot be computed.
using OccupancyFn = std::function<std::optional<double>(const GpuActivity&)>;

// `trace` covers trace.iterations calls (at least 1).
TraceRecords trace_records(const GpuTrace& trace, const OccupancyFn& occupancy);

}  // namespace attnbench
