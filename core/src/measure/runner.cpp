#include "measure/runner.hpp"

#include "base/names.hpp"
#include "measure/device/cuda_timing.hpp"
#include "measure/device/cupti_tracer.hpp"
#include "measure/passes/passes.hpp"
#include "measure/stats.hpp"
#include "records/assemble.hpp"

#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>

#ifdef ATTNBENCH_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace attnbench {

namespace {

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

void release_cached_memory(const HostInfo& host) {
#ifdef ATTNBENCH_WITH_CUDA
  if (host.cuda_available) c10::cuda::CUDACachingAllocator::emptyCache();
#else
  (void)host;
#endif
}

// Runs one pass; what it throws becomes the failure that ends the passes of this (point, backend).
template <class F>
std::optional<PassFailure> attempt(const std::string& name, const HostInfo& host, F&& body) {
  try {
    body();
    return std::nullopt;
  } catch (const c10::OutOfMemoryError& e) {
    release_cached_memory(host);
    return PassFailure{Status::oom, name + ": " + first_line(e.what_without_backtrace())};
  } catch (const Unsupported& e) {
    return PassFailure{Status::unsupported, e.what()};
  } catch (const c10::Error& e) {
    return PassFailure{Status::error, name + ": " + first_line(e.what_without_backtrace())};
  } catch (const std::exception& e) {
    return PassFailure{Status::error, name + ": " + first_line(e.what())};
  }
}

void run_passes(PassContext& ctx, uint64_t seed, std::unique_ptr<CudaTimer>& timer,
                PassResults& r) {
  const MeasureSettings& m = ctx.settings;
  if ((r.refused = attempt("first call", ctx.host, [&] { first_call_pass(ctx, seed); }))) return;
  auto pass = [&](bool wanted, const char* name, auto&& body) {
    if (!r.failure && wanted) r.failure = attempt(name, ctx.host, body);
  };
  pass(m.wants(Pass::correctness), "correctness", [&] { r.correctness = correctness_pass(ctx); });
  pass(true, "warm-up", [&] { r.warmup = warmup_pass(ctx); });
  if (!r.failure && m.wants(Pass::timing) && ctx.on_cuda() &&
      !timer)  // once, at the first CUDA point
    r.failure = attempt("timing set-up", ctx.host, [&] {
      timer = std::make_unique<CudaTimer>(ctx.host.cuda_device, ctx.host.l2_cache_bytes);
    });
  ctx.timer = timer.get();
  if (!r.failure && m.wants(Pass::timing)) {
    const std::vector<TimingMode> modes =
        ctx.on_cuda() ? m.timing_modes : std::vector<TimingMode>{TimingMode::wall};
    const int calls = calls_per_sample(m.batch_sample_ms, r.warmup->est_call_ms);
    for (TimingMode mode : modes) {
      TimedMode& timed = r.timing.emplace_back(TimedMode{mode, std::nullopt, std::nullopt});
      timed.failure =
          attempt(to_string(mode), ctx.host, [&] { timed.result = timing_pass(ctx, mode, calls); });
    }
  }
  pass(m.wants(Pass::cpu), "cpu", [&] { r.cpu = cpu_pass(ctx); });
  pass(m.wants(Pass::memory) && ctx.on_cuda(), "memory", [&] { r.memory = memory_pass(ctx); });
  pass(m.wants(Pass::ops), "ops", [&] { r.ops = ops_pass(ctx); });
  pass(m.wants(Pass::kernels) && ctx.on_cuda() && cupti_available(), "kernels",
       [&] { r.kernels = kernels_pass(ctx); });
}

}  // namespace

struct Runner::Impl {
  std::unique_ptr<CudaTimer> timer;  // created on the first CUDA point
};

Runner::Runner(HostInfo host, RunOptions options)
    : host_(std::move(host)), options_(std::move(options)), impl_(std::make_unique<Impl>()) {}

Runner::~Runner() = default;

BackendRecords Runner::measure(const Point& point, const LoadedBackend& loaded) {
  const Problem& problem = point.problem;
  const MeasureSettings& m = options_.measurement;
  RowSetup setup{point.id,     loaded.name,          problem,       options_.info, {},
                 std::nullopt, options_.peak_tflops, m.keep_samples};
  setup.modes =
      problem.device == Device::cuda ? m.timing_modes : std::vector<TimingMode>{TimingMode::wall};
  if (auto it = options_.tolerance.find(problem.dtype); it != options_.tolerance.end())
    setup.tolerance = it->second;

  PassResults results;
  if (problem.device == Device::cuda && !host_.cuda_available) {
    results.refused = PassFailure{Status::unsupported, "no CUDA device on this machine"};
  } else if (const Support support = loaded.backend->supports(problem); !support.supported) {
    results.refused = PassFailure{Status::unsupported, support.reason};
  } else {
    c10::InferenceMode inference_mode;
    PassContext ctx{problem, m, host_, *loaded.backend};
    run_passes(ctx, options_.seed ^ fnv1a(point.id + "/" + loaded.name), impl_->timer, results);
  }  // the inputs and the last output are freed here, before the cache is emptied
  release_cached_memory(host_);
  return assemble_records(setup, results);
}

}  // namespace attnbench
