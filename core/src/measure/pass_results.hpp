// What each measurement pass returns: typed, LibTorch-free, so that records/ can build rows from
// them in tests without a GPU. A pass that throws becomes a PassFailure and stops the passes after
// it.
#pragma once

#include "base/enums.hpp"
#include "base/stats.hpp"
#include "kinds/checks.hpp"
#include "measure/device/cupti_tracer.hpp"
#include "measure/power_state.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnbench {

struct PassFailure {
  Status status = Status::error;
  std::string reason;
};

// fp8 points: the per-tensor scales the inputs were quantized with (value = fp8 number * scale).
struct InputScales {
  double q = 1, k = 1, v = 1;
};

struct CorrectnessResult {
  // Forward: the largest per-row relative error of the output against float64; backward: the
  // largest normwise error of dq, dk, dv per head. NaN: a non-finite value.
  double rel_err = 0;
  std::string worst = "out";  // where rel_err was found: out, dq, dk or dv
  // Forward: the error of a call made after the timed ones, with q, k and v changed in place to
  // fresh values, against the reference of those: a backend returning a cached or stale output
  // passes the first check and fails this one.
  std::optional<double> fresh_rel_err;  // ReferenceError::judged()
  // The first input (q, k, v, ...) the backend wrote into between their drawing and the end of the
  // warm-up; empty when none: its rows are judged on what it destroyed otherwise.
  std::string changed_input;
  // Forward: the worst row of the whole output against float32 (judged against
  // kWholeOutputSlack x the tolerance).
  double whole_rel_err = 0;
  // Forward, a paged point drawn in order: the same check with the table's pages scattered
  // (a backend reading the cache as if contiguous passes in order, and fails here).
  std::optional<double> scattered_rel_err;
  std::vector<VariantCheck> variants;  // forward: each variant the point has
};

struct WarmupResult {
  int calls = 0;
  double est_call_ms = 0;  // median wall time of a synchronized call
};

// The GPU's SM clock, power and temperature at one moment (NVML).
struct DeviceState {
  double sm_clock_mhz = 0;
  double power_w = 0;
  double temperature_c = 0;
  // How long the power and thermal limiters have held the clocks below the application clocks
  // since the driver loaded (NVML's violation counters); nullopt where NVML does not say.
  std::optional<double> limited_ms;
};


// A pass's SM clock fell by more than this fraction: its row gets the flag `clock_throttled`.
inline constexpr double kClockDropFlag = 0.03;
// Memory a (point, backend) kept beyond this is a leak (flag leaked_device_memory; the worker is
// replaced): reserved by PyTorch's allocator, or gone from the device's free memory. cuBLAS's and
// cuDNN's workspaces and lazily loaded kernels stay well below it.
inline constexpr double kLeakedMib = 1024;
// Memory that stops being free call after call is a leak at any size (a backend that cudaMallocs
// 4 MiB a call): read across the CPU pass (else the energy pass), whose calls come after
// everything a first call loads or a workspace grows to once. Flagged from kGrowthMib and
// kGrowthPerCallMib a call; the device's free memory moves in 2 MiB pages.
inline constexpr double kGrowthMib = 16;
inline constexpr double kGrowthPerCallMib = 0.5;
// State the size of its inputs (flag kept_input_sized_state): a backend that held at least this
// share of its k and v between calls, and at least kKeptStateFloorMib (FlashInfer's 136 MiB of
// workspaces, made at a backend's first call, stay below it).
inline constexpr double kKeptStateShare = 0.5;
inline constexpr double kKeptStateFloorMib = 256;

// What a backend holds after a point that grew it by `growth` MiB (negative: it let go of some),
// `held` the running total of its points in this worker, never below 0; returns the new total.
inline double add_kept(double& held, double growth) {
  held = std::max(0.0, held + growth);
  return held;
}
struct MemoryGrowth {
  double mib = 0;  // free memory (and what the allocator held unused) before less after
  int64_t calls = 0;
};
inline bool grew_with_calls(const MemoryGrowth& g) {
  return g.calls > 0 && g.mib >= kGrowthMib && g.mib >= kGrowthPerCallMib * double(g.calls);
}

struct TimingResult {
  TimingMode mode = TimingMode::wall;
  int calls_per_sample = 1;
  Summary summary;
  bool converged = false;
  std::vector<double> samples;                          // ms per call
  std::optional<DeviceState> device_start, device_end;  // around the pass; none without NVML
  PowerMode power = PowerMode::sustained;
  // Each kept sample's SM clock: its mean during the sample, or NVML's reading right after it.
  std::vector<double> sample_clock_mhz;
  // burst: samples dropped for a low clock, the rest taken before their successors, and whether
  // the cooldown ran out (the samples after it kept at a lower clock).
  int dropped_for_clock = 0;
  double rested_s = 0;
  bool clock_recovered = true;
  // power burst: the clock a sample after the longest rest still fell to, kept as the bar
  std::optional<double> rested_clock_mhz;
  double highest_clock_mhz = 0;  // of every sample taken, dropped or kept
  // Forward: q's values were moved before every sample (outside the timed region), and the last
  // timed output (a graph's: what its last replay wrote) is checked against float64 attention of
  // the inputs it was given: a cached output, or a graph that does not read its inputs, is off.
  std::optional<double> followed_rel_err;  // ReferenceError::judged()
};

// One timing pass per mode; a mode that fails fails only its own row.
struct TimedMode {
  TimingMode mode = TimingMode::wall;
  std::optional<TimingResult> result;
  std::optional<PassFailure> failure;
};

struct CpuResult {
  Summary us;                      // host time of one call, microseconds
  std::optional<double> host_mhz;  // the core's effective clock just before (host_clock.hpp)
  double preempted_per_call = 0;   // involuntary context switches inside the timed calls
  double migrated_per_call = 0;    // calls that ended on another core than they began
};

struct MemoryResult {
  double peak_extra_mib = 0;  // allocated beyond the inputs and the output
};

struct OpCounts {
  std::vector<std::string> top_level;  // ops the call made itself, in order; views left out
  int64_t nested = 0;                  // every op at any depth, views included
  int64_t copies = 0;                  // aten::copy_ of more than one element, at any depth
};

// One ATen op (or autograd node, or user scope) on the host, from RecordFunction.
struct CpuSpan {
  std::string name;
  int64_t start_ns = 0, end_ns = 0;  // steady clock
  uint64_t thread = 0;               // pthread_self of the thread it ran on
  uint32_t os_thread = 0;            // its gettid, the id CUPTI may report for launches
  int depth = 0;                     // 0: called by the backend itself
};

// A few calls after warm-up, as a timeline: host ops, and on CUDA the GPU's activities and the
// API calls that launched them (cupti_tracer.hpp's GpuTrace, clocks converted by records/).
struct TraceResult {
  uint64_t thread = 0;                             // the calling thread, as CpuSpan::thread
  uint32_t os_thread = 0;                          // and as CpuSpan::os_thread
  std::vector<std::pair<int64_t, int64_t>> calls;  // steady-clock start and end of each call
  std::vector<CpuSpan> cpu;
  std::optional<GpuTrace> gpu;
};

// One kernel (or memcpy, memset) of a call, by launch shape: what the kernel CSV's rows say of it.
struct KernelStat {
  ActivityKind kind = ActivityKind::kernel;
  std::string name;  // demangled
  double launches_per_call = 0;
  double duration_us_mean = 0;
  std::string grid, block;  // "x,y,z"
  std::optional<int64_t> registers_per_thread, static_smem_bytes, dynamic_smem_bytes;
  std::optional<double> theoretical_occupancy_pct;
  std::optional<int64_t> bytes;  // memcpy/memset size
};

struct KernelsResult {
  double kernels_per_call = 0, memcpy_per_call = 0, memset_per_call = 0;
  // GPU time of a call's kernels, memcpys and memsets added up, and its span (the first one's start
  // to the last one's end), per call: the device is idle between the traced calls.
  double gpu_us_per_call = 0, gpu_span_us_per_call = 0;
  // The kernels' durations alone (no memcpy, no memset): what a profiler-based table sums
  // (cudnn-frontend's benchmark adds up the attention kernels torch.profiler saw).
  double kernel_us_per_call = 0;
  std::vector<KernelStat> kernels;
  bool same_every_call = true;
  std::string difference;  // when not: what differed
};

// Everything the passes of one (point, backend) produced; a pass that did not run stays empty.
struct PassResults {
  std::optional<PassFailure> refused;  // unsupported, or the first call failed: nothing else ran
  std::string feed;  // how the backend was fed when not natively (Support::feed); empty: native
  std::optional<InputScales> fp8_scales;
  std::optional<double> peak_reserved_mib;  // CUDA: the caching allocator's peak over all passes
  // CUDA: what the allocator still held after the backend's objects were gone and its cache was
  // emptied (memory a backend, or a graph it made, kept), and what it held before, its cache
  // emptied too (what earlier (point, backend)s left is not this one's).
  std::optional<double> reserved_left_mib;
  std::optional<double> reserved_before_mib;
  // CUDA: the device's free memory (cudaMemGetInfo) before less after, the same moments: what
  // this (point, backend) kept, in PyTorch's allocator or outside it (a library's own cudaMalloc).
  std::optional<double> device_mem_left_mib;
  std::optional<MemoryGrowth> device_mem_growth;  // CUDA: across the CPU (or energy) pass
  // CUDA: device memory the backend holds between calls, its result let go: what each of its
  // points in this worker grew it by (from the inputs made to after its calls, the harness's own
  // buffers left out), added up: workspaces, plans, caches, a copy kept from point to point.
  std::optional<double> device_mem_kept_mib;
  double kv_cache_mib = 0;  // the inputs' k and v (one tensor where v is a view of k)
  // Each pass's wall time in the worker, in the order they ran (the harness's own cost).
  std::vector<std::pair<std::string, double>> pass_seconds;
  std::optional<double> first_call_ms;  // the first call's wall time, to the device's end of it
  std::optional<CorrectnessResult> correctness;
  std::optional<WarmupResult> warmup;
  std::vector<TimedMode> timing;
  std::optional<CpuResult> cpu;
  std::optional<MemoryResult> memory;
  std::optional<OpCounts> ops;
  std::optional<KernelsResult> kernels;
  std::optional<EnergyReading> energy;  // CUDA points where NVML reads the energy counter
  std::optional<TraceResult> trace;
  std::optional<PassFailure> failure;  // the pass that stopped the ones after it
};

// What a (point, backend) kept (MiB): the larger of its growth of the allocator's reservation and
// the device's free memory it took; 0 where nothing was measured (CPU points).
inline double kept_device_memory(const PassResults& r) {
  double kept = 0;
  if (r.reserved_left_mib) kept = *r.reserved_left_mib - r.reserved_before_mib.value_or(0);
  if (r.device_mem_left_mib) kept = std::max(kept, *r.device_mem_left_mib);
  return kept;
}

}  // namespace attnbench
