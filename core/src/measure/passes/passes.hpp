// The measurement passes of one (point, backend), each a function in its own file that takes the
// one context and returns its own typed result (pass_results.hpp). A pass throws when it cannot
// finish; the runner turns that into a PassFailure and runs no pass after it.
#pragma once

#include "config/settings.hpp"
#include "measure/device/host_info.hpp"
#include "measure/pass_results.hpp"
#include "kinds/tensors.hpp"

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace attnbench {

class CudaTimer;
class DeviceMonitor;
class SmClockSpan;

struct PassContext {
  const Problem& problem;
  const MeasureSettings& settings;
  const HostInfo& host;
  Backend& backend;
  CudaTimer* timer = nullptr;                       // set for CUDA points
  const DeviceMonitor* monitor = nullptr;           // set for CUDA points
  SmClockSpan* clock_span = nullptr;                // set for CUDA points where built
  // power: burst: the SM clock a sample must reach to be kept (the runner's, kept per worker)
  std::optional<double> burst_reference_mhz;
  std::function<void(const std::string&)> on_pass;  // told each pass's name as it starts
  InputTensors inputs;
  std::vector<InputPrint> input_prints;  // the inputs as drawn, before the first call
  std::optional<Inputs> view;
  std::unique_ptr<BackwardPass> backward;  // bwd points: made by the first call
  // The last result stays alive (graph capture and the memory pass need it): the output forward,
  // the gradients backward.
  at::Tensor out, dq, dk, dv;
  int64_t calls = 0;  // made so far (graph replays not counted)
  std::mt19937_64 shifts;  // the page-table rotations of move_inputs(), seeded with the inputs
  // Device memory nobody held once the inputs were made, before the first call (CUDA points), and
  // what the harness itself took since (its timer's buffers): the base of device_mem_kept_mib.
  std::optional<double> unheld_at_start_mib;
  double harness_took_mib = 0;
  // Each pass's wall time as it ran, in order (PassResults::pass_seconds).
  std::vector<std::pair<std::string, double>> pass_seconds;

  // New values in every input before a timed sample (tensors.hpp: move_inputs), outside it.
  void move_inputs() { attnbench::move_inputs(inputs, static_cast<int64_t>(shifts() >> 1)); }

  // The call every pass times or counts: one forward, or one backward.
  void call() {
    ++calls;
    if (backward)
      backward->run(inputs.grad_out, dq, dk, dv);
    else
      out = backend.forward(*view);
  }
  void release_result() { out = dq = dk = dv = at::Tensor(); }
  int64_t result_bytes() const {
    int64_t bytes = 0;
    for (const at::Tensor* t : {&out, &dq, &dk, &dv})
      if (t->defined()) bytes += static_cast<int64_t>(t->nbytes());
    return bytes;
  }
  bool on_cuda() const { return problem.device == Device::cuda; }
};

// Creates the inputs from `seed` (fresh random data, outside any timed region), for bwd points asks
// the backend for its BackwardPass (which runs the forward), and makes the first call, which also
// tells whether the backend runs this shape at all. Returns that call's wall time in ms, from the
// call (bwd: prepare_backward) to the device's end of it: what a JIT compiles, a library plans or
// loads lazily the first time this worker meets the shape.
double first_call_pass(PassContext& ctx, uint64_t seed);
// The result of the first call against float64 attention (or its gradients) on a slice, and
// whether the calls so far left the inputs as drawn; a paged point drawn in order is checked once
// more with its table scattered (scatter_pages), and each variant the point has (window, softcap,
// sinks, chunk, an fp8 cache's scales, MLA's rope part) is checked to move the reference.
CorrectnessResult correctness_pass(PassContext& ctx);
// The first input the calls since the drawing wrote into (changed_input in tensors.hpp), or "".
std::string changed_input_since_drawn(const PassContext& ctx);
// Empties PyTorch's CUDA caching allocator (what earlier points or passes left cached); never
// throws.
void release_cached_memory(const HostInfo& host) noexcept;
// The device's free memory now (cudaMemGetInfo: what every allocator, PyTorch's or not, left);
// none while another process has the GPU (ctest -j4, a neighbour's job): what it takes or gives
// back would be charged to the backend measured here.
std::optional<double> device_free_mib(const HostInfo& host, const DeviceMonitor* monitor) noexcept;
// Device memory nobody holds, without emptying the cache (calls after it stay as warm as before):
// the device's free memory and what PyTorch's allocator reserved but holds no tensor in; none
// without CUDA or while another process has the GPU.
std::optional<double> unheld_device_mib(const HostInfo& host, const DeviceMonitor* monitor) noexcept;

// Changes q, k and v in place to fresh random values (same tensors, same scales), makes one call
// and returns its error against the reference of the new values.
double fresh_inputs_pass(PassContext& ctx, uint64_t seed);
// Calls for at least warmup_ms (module loading, plan selection, allocator growth stay out of the
// numbers).
WarmupResult warmup_pass(PassContext& ctx);
// GPU time per call in one mode (CUDA events), or wall time on the CPU, until the noise target or a
// cap.
TimingResult timing_pass(PassContext& ctx, TimingMode mode, int calls_per_sample);
// Host time inside one call, with no profiler attached.
CpuResult cpu_pass(PassContext& ctx);
// Device memory one call allocates beyond its inputs and output (CUDA points).
MemoryResult memory_pass(PassContext& ctx);
// ATen operators per call, through RecordFunction.
OpCounts ops_pass(PassContext& ctx);
// Kernels, copies and memsets per call through CUPTI, attached for this pass only (CUDA points).
KernelsResult kernels_pass(PassContext& ctx);
// The board's energy per call (NVML's counter), calls back to back for a fraction of a second;
// nullopt where the counter cannot be read or does not tick.
std::optional<EnergyReading> energy_pass(PassContext& ctx, double est_call_ms);
// A timeline of a few calls (host ops; on CUDA, launches and GPU activities through CUPTI), after
// every measurement: tracing slows the host, so it never overlaps timing.
TraceResult trace_pass(PassContext& ctx);

}  // namespace attnbench
