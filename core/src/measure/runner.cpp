#include "measure/runner.hpp"
#include "measure/torch_settings.hpp"

#include "base/errors.hpp"
#include "base/hash.hpp"
#include "base/names.hpp"
#include "base/stats.hpp"
#include "measure/device/cuda_timing.hpp"
#include "measure/device/cupti_tracer.hpp"
#include "measure/device/device_monitor.hpp"
#include "measure/device/sm_clock_span.hpp"
#include "kinds/variant.hpp"
#include "measure/passes/passes.hpp"

#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>

#include <map>
#include <new>

#ifdef ATTNBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContextLight.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace attnbench {

// Never throws: after a sticky CUDA error even emptying the cache fails, and the worker's own
// check (sticky_cuda_error) is what must report that.
void release_cached_memory(const HostInfo& host) noexcept {
#ifdef ATTNBENCH_WITH_CUDA
  try {
    if (!host.cuda_available) return;
    // cuBLAS keeps a workspace per (handle, stream), made at its first use from the caching
    // allocator: carved out of a point's large freed block, it pins that whole segment. A graph
    // capture's stream made one more each time (naive's backward at b2-h32-s8192 with graph mode
    // left 16.4 GiB reserved; without them, 8.2).
    at::cuda::clearCublasWorkspaces();
    c10::cuda::CUDACachingAllocator::emptyCache();
  } catch (...) {
  }
#else
  (void)host;
#endif
}

namespace {

// Out of memory, whoever says so: PyTorch's allocator (OutOfMemoryError), or a message that
// carries it out of a wrapper (a graph capture, a library's own error).
bool says_out_of_memory(const std::string& what) {
  return what.find("out of memory") != std::string::npos ||
         what.find("CUDA_ERROR_OUT_OF_MEMORY") != std::string::npos ||
         what.find("cudaErrorMemoryAllocation") != std::string::npos ||
         // The CPU allocator's own words, as a c10::Error or relayed (a Python backend's).
         what.find("DefaultCPUAllocator: can't allocate memory") != std::string::npos ||
         what.find("DefaultCPUAllocator: not enough memory") != std::string::npos;
}

// The caching allocator's peak reserved bytes since the last reset (CUDA points).
void reset_peak_reserved(const HostInfo& host) noexcept {
#ifdef ATTNBENCH_WITH_CUDA
  try {
    if (host.cuda_available)
      c10::cuda::CUDACachingAllocator::resetPeakStats(
          static_cast<c10::DeviceIndex>(host.cuda_device));
  } catch (...) {
  }
#else
  (void)host;
#endif
}

// The caching allocator's reserved bytes: at most since the last reset, or now.
std::optional<double> reserved_mib(const HostInfo& host, bool peak) noexcept {
#ifdef ATTNBENCH_WITH_CUDA
  try {
    if (!host.cuda_available) return std::nullopt;
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(
        static_cast<c10::DeviceIndex>(host.cuda_device));
    const auto& reserved =
        stats.reserved_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)];
    return static_cast<double>(peak ? reserved.peak : reserved.current) / (1024.0 * 1024.0);
  } catch (...) {
    return std::nullopt;
  }
#else
  (void)host, (void)peak;
  return std::nullopt;
#endif
}

// Runs one pass; what it throws becomes the failure that ends the passes of this (point, backend).
template <class F>
std::optional<PassFailure> attempt(const std::string& name, PassContext& ctx, F&& body) {
  const HostInfo& host = ctx.host;
  if (ctx.on_pass) ctx.on_pass(name);
  // Its wall time, thrown or not: what the harness spends on each pass (pass_seconds).
  struct Clock {
    PassContext& ctx;
    const std::string& name;
    double began = steady_seconds();
    ~Clock() { ctx.pass_seconds.emplace_back(name, steady_seconds() - began); }
  } clock{ctx, name};
  try {
    body();
    return std::nullopt;
  } catch (const c10::OutOfMemoryError& e) {
    release_cached_memory(host);
    return PassFailure{Status::oom, name + ": " + first_line(e.what_without_backtrace())};
  } catch (const Unsupported& e) {
    return PassFailure{Status::unsupported, e.what()};
  } catch (const c10::Error& e) {
    // The CPU allocator reports exhaustion as a plain c10::Error: it is an oom all the same.
    const std::string what = first_line(e.what_without_backtrace());
    const bool oom = says_out_of_memory(what);
    if (oom) release_cached_memory(host);
    return PassFailure{oom ? Status::oom : Status::error, name + ": " + what};
  } catch (const std::bad_alloc& e) {
    return PassFailure{Status::oom,
                       name + ": " + std::string("out of host memory (") + e.what() + ")"};
  } catch (const std::exception& e) {
    const bool oom = says_out_of_memory(e.what());
    if (oom) release_cached_memory(host);
    return PassFailure{oom ? Status::oom : Status::error, name + ": " + first_line(e.what())};
  }
}

// What the runner makes once, at the first CUDA point, and keeps.
struct CudaInstruments {
  std::unique_ptr<CudaTimer> timer;
  std::unique_ptr<DeviceMonitor> monitor;
  std::unique_ptr<SmClockSpan> clock_span;  // where nvcc built it
  // power: burst: the SM clock a sample must reach, the GPU's maximum until a pass's cooldown ran
  // out, then the highest clock that pass saw (a card capped below its maximum).
  std::optional<double> burst_reference_mhz;
};

void run_passes(PassContext& ctx, uint64_t seed, CudaInstruments& cuda, PassResults& r) {
  const MeasureSettings& m = ctx.settings;
  ctx.monitor = cuda.monitor.get();
  r.refused = attempt("first call", ctx, [&] { r.first_call_ms = first_call_pass(ctx, seed); });
  if (ctx.problem.cache_dtype() == DType::fp8_e4m3 && ctx.inputs.q.defined())
    r.fp8_scales = InputScales{ctx.inputs.q_scale, ctx.inputs.k_scale, ctx.inputs.v_scale};
  if (ctx.inputs.k.defined())
    r.kv_cache_mib = static_cast<double>(ctx.inputs.k.nbytes() +
                                         (ctx.problem.v_in_k ? 0 : ctx.inputs.v.nbytes())) /
                     (1024.0 * 1024.0);
  if (r.refused) return;
  auto pass = [&](bool wanted, const char* name, auto&& body) {
    if (!r.failure && wanted) r.failure = attempt(name, ctx, body);
  };
  pass(m.wants(Pass::correctness), "correctness", [&] { r.correctness = correctness_pass(ctx); });
  pass(true, "warm-up", [&] { r.warmup = warmup_pass(ctx); });
  // A backend that writes into its inputs on a later call: before the harness moves them itself.
  pass(r.correctness && r.correctness->changed_input.empty(), "input check",
       [&] { r.correctness->changed_input = changed_input_since_drawn(ctx); });
  if (!r.failure && (m.wants(Pass::timing) || m.wants(Pass::energy)) && ctx.on_cuda() &&
      !cuda.timer)  // once, at the first CUDA point
    r.failure = attempt("timing set-up", ctx, [&] {
      // The timer's buffers live as long as the worker: in a segment of their own, not carved
      // out of a block this point's backend freed (which they would pin for good).
      release_cached_memory(ctx.host);
      const std::optional<double> before = unheld_device_mib(ctx.host, ctx.monitor);
      cuda.timer = std::make_unique<CudaTimer>(ctx.host.cuda_device, ctx.host.l2_cache_bytes);
      if (cuda.monitor) cuda.burst_reference_mhz = cuda.monitor->max_sm_clock_mhz();
#ifdef ATTNBENCH_WITH_KERNELS
      cuda.clock_span = std::make_unique<SmClockSpan>(ctx.host.cuda_device);
#endif
      // The harness's, not the backend's: left out of device_mem_kept_mib.
      if (const auto after = unheld_device_mib(ctx.host, ctx.monitor); before && after)
        ctx.harness_took_mib += *before - *after;
    });
  ctx.timer = cuda.timer.get();
  ctx.monitor = cuda.monitor.get();
  ctx.clock_span = cuda.clock_span.get();
  ctx.burst_reference_mhz = cuda.burst_reference_mhz;
  if (!r.failure && m.wants(Pass::timing)) {
    const std::vector<TimingMode> modes =
        ctx.on_cuda() ? m.timing_modes : std::vector<TimingMode>{TimingMode::wall};
    // A kind whose calls update an input in place (a state pool) is put back as drawn before each
    // sample; the check that the timed output follows its inputs then holds for one call a sample.
    const int calls = kind_tensors(ctx.problem).written_inputs().empty()
                          ? calls_per_sample(m.batch_sample_ms, r.warmup->est_call_ms)
                          : 1;
    for (TimingMode mode : modes) {
      TimedMode& timed = r.timing.emplace_back(TimedMode{mode, std::nullopt, std::nullopt});
      timed.failure =
          attempt(to_string(mode), ctx, [&] { timed.result = timing_pass(ctx, mode, calls); });
      if (timed.result && !timed.result->clock_recovered)
        ctx.burst_reference_mhz = cuda.burst_reference_mhz = timed.result->highest_clock_mhz;
    }
  }
  // Memory that stops being free call after call is a leak at any size; what a first call loads
  // or a workspace grows to once is not: read across the CPU pass (else the energy pass), whose
  // calls come after all of that.
  auto watch_growth = [&](auto&& body) {
    return [&, body] {
      if (r.device_mem_growth || !ctx.on_cuda()) return body();
      const int64_t calls_before = ctx.calls;
      const std::optional<double> before = unheld_device_mib(ctx.host, ctx.monitor);
      body();
      const std::optional<double> after =
          before ? unheld_device_mib(ctx.host, ctx.monitor) : std::nullopt;
      if (after) r.device_mem_growth = MemoryGrowth{*before - *after, ctx.calls - calls_before};
    };
  };
  pass(m.wants(Pass::cpu), "cpu", watch_growth([&] { r.cpu = cpu_pass(ctx); }));
  pass(r.correctness && !ctx.backward, "fresh inputs", [&] {
    r.correctness->fresh_rel_err = fresh_inputs_pass(ctx, seed ^ 0x9e3779b97f4a7c15ULL);
  });
  // The passes that time nothing start from an emptied cache: what the timing passes left
  // cached, split to their sizes, must not make a large backend's next call fail (math's
  // backward at 16k keys did, in the kernels pass, after its timed calls ran).
  auto untimed = [&](auto&& body) {
    return [&, body] {
      release_cached_memory(ctx.host);
      body();
    };
  };
  // What the backend holds between calls (its result let go): a workspace, a plan, or state
  // derived from inputs it has seen (flag kept_input_sized_state).
  if (!r.failure && ctx.unheld_at_start_mib) {
    ctx.release_result();
    release_cached_memory(ctx.host);
    if (const auto now = unheld_device_mib(ctx.host, ctx.monitor))  // this point's growth
      r.device_mem_kept_mib = *ctx.unheld_at_start_mib - ctx.harness_took_mib - *now;
  }
  pass(m.wants(Pass::memory) && ctx.on_cuda(), "memory",
       untimed([&] { r.memory = memory_pass(ctx); }));
  pass(m.wants(Pass::ops), "ops", untimed([&] { r.ops = ops_pass(ctx); }));
  pass(m.wants(Pass::kernels) && ctx.on_cuda() && cupti_available(), "kernels",
       untimed([&] { r.kernels = kernels_pass(ctx); }));
  pass(m.wants(Pass::energy) && ctx.on_cuda() && ctx.monitor && r.warmup &&
           energy_pays(m, r.warmup->est_call_ms),
       "energy",
       untimed(watch_growth([&] { r.energy = energy_pass(ctx, r.warmup->est_call_ms); })));
  pass(m.trace, "trace", [&] { r.trace = trace_pass(ctx); });
}

}  // namespace

struct Runner::Impl {
  CudaInstruments cuda;  // created at the first CUDA point
  // What each backend holds between calls, added up over its points in this worker: a copy it
  // keeps from one point to the next is held at every point, not only where it was made.
  std::map<std::string, double> kept_mib;
};

Runner::Runner(HostInfo host, RunnerOptions options)
    : host_(std::move(host)), options_(std::move(options)), impl_(std::make_unique<Impl>()) {}

Runner::~Runner() = default;

PassResults Runner::measure(const Point& point, const LoadedBackend& loaded) {
  const Problem& problem = point.problem;
  const MeasureSettings& m = options_.measurement;

  PassResults results;
  const TorchSettingsGuard settings;  // what this backend changes of torch's, the next never sees
  const bool cuda = problem.device == Device::cuda;
  if (cuda && host_.cuda_available && !impl_->cuda.monitor)  // NVML only: no device memory
    impl_->cuda.monitor = std::make_unique<DeviceMonitor>(host_.cuda_device);
  const DeviceMonitor* monitor = impl_->cuda.monitor.get();
  std::optional<double> free_before;
  if (cuda) {  // measured as after: the cache emptied, so only what is held counts
    release_cached_memory(host_);
    results.reserved_before_mib = reserved_mib(host_, false);
    free_before = device_free_mib(host_, monitor);
  }
  if (cuda && !host_.cuda_available) {
    results.refused = PassFailure{Status::unsupported, "no CUDA device on this machine"};
  } else {
    // Forward points run without autograd; backward ones need it (the backend's forward records
    // the graph its BackwardPass replays).
    std::optional<c10::InferenceMode> inference_mode;
    if (problem.direction == Direction::fwd) inference_mode.emplace();
    PassContext ctx{problem, m, host_, *loaded.backend};
    ctx.on_pass = options_.on_pass;
    // supports() is the backend's code too (a Python function's, say): what it throws is a row.
    // First what it declares (kinds, variants), so that no backend sees a kind it does not know.
    Support support;
    results.refused = attempt("supports", ctx, [&] {
      support = declared_support(*loaded.backend, problem);
      if (support.supported) support = loaded.backend->supports(problem);
    });
    if (!results.refused && !support.supported)
      results.refused = PassFailure{Status::unsupported, support.reason};
    results.feed = support.feed;
    if (!results.refused) {
      if (cuda) reset_peak_reserved(host_);
      run_passes(ctx, options_.seed ^ fnv1a(point.id + "/" + loaded.name), impl_->cuda, results);
      if (cuda) results.peak_reserved_mib = reserved_mib(host_, true);
    }
    results.pass_seconds = std::move(ctx.pass_seconds);
    if (results.device_mem_kept_mib)
      results.device_mem_kept_mib =
          add_kept(impl_->kept_mib[loaded.name], *results.device_mem_kept_mib);
  }  // the inputs and the last output are freed here, before the cache is emptied
  release_cached_memory(host_);
  if (cuda) {
    results.reserved_left_mib = reserved_mib(host_, false);
    if (const auto free_after = device_free_mib(host_, monitor); free_before && free_after)
      results.device_mem_left_mib = *free_before - *free_after;
  }
  return results;
}

}  // namespace attnbench
