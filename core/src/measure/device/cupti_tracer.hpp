// GPU activity of a few calls, recorded with the CUPTI activity API in a pass of its own: CUPTI
// inflates host time several-fold, so it is attached only here and detached (finalized) after.
#pragma once

#include "base/enums.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attnbench {

struct GpuActivity {
  ActivityKind kind = ActivityKind::kernel;
  std::string name;  // demangled kernel name, or "memcpy DtoD", "memset"
  uint64_t start_ns = 0, end_ns = 0;
  int grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  int registers_per_thread = 0;
  int static_smem_bytes = 0, dynamic_smem_bytes = 0;
  uint32_t smem_config_bytes = 0;  // shared memory per SM the kernel ran with (the carveout)
  uint64_t bytes = 0;              // memcpy / memset size
  int iteration = -1;              // which traced call it belongs to; -1: none
  uint32_t correlation_id = 0;     // the API call that launched it (ApiCall::correlation_id)
  uint32_t stream_id = 0;
};

// A CUDA runtime or driver call that put a kernel, memcpy or memset on the GPU.
struct ApiCall {
  std::string name;  // "cudaLaunchKernel", "cuLaunchKernelEx", "cudaMemcpyAsync", ...
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t thread_id = 0;  // as CUPTI reports it
  uint32_t correlation_id = 0;
};

// A CUPTI timestamp and the steady clock read at the same moment, to put both on one time line.
struct ClockPair {
  uint64_t cupti_ns = 0;
  int64_t steady_ns = 0;
};

struct GpuTrace {
  int iterations = 0;                   // traced calls
  std::vector<GpuActivity> activities;  // those that fell inside a traced call
  bool same_every_iteration = true;     // the same multiset of kernels in every call
  std::string difference;               // when not: what differed
  std::vector<ApiCall> launches;        // with_launches: the calls behind `activities`
  ClockPair first, last;                // before the first call, after the last
};

// True while this process has CUPTI activity tracing attached.
bool cupti_attached();

// Whether this build can trace (compiled with CUPTI); false means kernel columns stay empty.
bool cupti_available();

// Runs `call` `iterations` times with the device synchronized between calls, recording every
// kernel, memcpy and memset (and, with_launches, the API calls that launched them), then detaches
// CUPTI. Throws std::runtime_error on CUPTI errors.
GpuTrace trace_gpu_activity(const std::function<void()>& call, int iterations,
                            bool with_launches = false);

// Theoretical occupancy (% of the SM's warp slots) from the launch configuration and resources a
// kernel record carries, using the toolkit's occupancy calculator and the device's limits. Works
// for kernels launched through the driver (cuLaunchKernelEx) since it needs no function handle.
std::optional<double> theoretical_occupancy_pct(const GpuActivity& kernel, int device);

}  // namespace attnbench
