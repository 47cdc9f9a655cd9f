#include "runner.hpp"

#include "cuda_timing.hpp"
#include "cupti_tracer.hpp"
#include "kernel_rows.hpp"
#include "op_counter.hpp"
#include "stats.hpp"
#include "tensors.hpp"
#include "types.hpp"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>

#ifdef ATTNBENCH_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include <chrono>
#include <cmath>
#include <ctime>
#include <map>

namespace attnbench {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double process_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// A pass that fails stops the passes after it; what was measured before stays in the row.
struct PassFailure {
  Status status;
  std::string reason;
};

void release_cached_memory(const HostInfo& host) {
#ifdef ATTNBENCH_WITH_CUDA
  if (host.cuda_available) c10::cuda::CUDACachingAllocator::emptyCache();
#else
  (void)host;
#endif
}

template <class F>
std::optional<PassFailure> run_pass(const std::string& name, const HostInfo& host, F&& body) {
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

bool wants(const MeasureSettings& m, Pass pass) {
  for (auto p : m.passes)
    if (p == pass) return true;
  return false;
}

}  // namespace

struct Runner::Impl {
  std::unique_ptr<CudaTimer> timer;  // created on the first CUDA point
};

Runner::Runner(HostInfo host, RunOptions options)
    : host_(std::move(host)), options_(std::move(options)), impl_(std::make_unique<Impl>()) {}

Runner::~Runner() = default;

BackendResult Runner::measure(const Point& point, const LoadedBackend& loaded) {
  const Problem& problem = point.problem;
  const MeasureSettings& m = options_.measurement;
  const bool on_cuda = problem.device == Device::cuda;
  const std::vector<TimingMode> modes = on_cuda ? m.timing_modes : std::vector<TimingMode>{TimingMode::wall};

  Row base;
  base.point_id = point.id;
  base.backend = loaded.name;
  base.problem = problem;
  base.run = options_.info;
  base.gflop = attention_flop(problem) / 1e9;
  if (auto it = options_.tolerance.find(problem.dtype); it != options_.tolerance.end()) base.tolerance = it->second;

  BackendResult result;
  auto every_mode = [&](Status status, const std::string& reason) {
    for (auto mode : modes) {
      Row row = base;
      row.timing_mode = to_string(mode);
      row.status = status;
      row.reason = reason;
      result.rows.push_back(row);
    }
    return result;
  };

  if (on_cuda && !host_.cuda_available) return every_mode(Status::unsupported, "no CUDA device on this machine");
  const Support support = loaded.backend->supports(problem);
  if (!support.supported) return every_mode(Status::unsupported, support.reason);

  Backend& backend = *loaded.backend;
  c10::InferenceMode inference_mode;
  InputTensors inputs;
  std::optional<Inputs> view;
  at::Tensor out;  // the last output stays alive: graph capture and the memory pass need it
  auto call = [&] { out = backend.forward(*view); };

  // Set-up and the first call, which also tells whether the backend runs this shape at all.
  if (auto failure = run_pass("first call", host_, [&] {
        inputs = make_inputs(problem, options_.seed ^ fnv1a(point.id + "/" + loaded.name));
        view.emplace(inputs.view());
        call();
        synchronize_device(host_);
      })) {
    out = at::Tensor();
    inputs = InputTensors();
    release_cached_memory(host_);
    return every_mode(failure->status, failure->reason);
  }

  std::optional<PassFailure> failure;
  auto pass = [&](Pass which, const char* name, auto&& body) {
    if (failure || !wants(m, which)) return;
    failure = run_pass(name, host_, body);
  };

  pass(Pass::correctness, "correctness", [&] {
    const double err = max_row_rel_error(inputs, out);
    base.rel_err = err;
    if (std::isnan(err)) {
      base.status = Status::wrong;
      base.reason = "the output has non-finite values";
    } else if (base.tolerance && err > *base.tolerance) {
      base.status = Status::wrong;
      char buf[128];
      std::snprintf(buf, sizeof buf, "max row relative error %.3g above the %s tolerance %.3g", err,
                    to_string(problem.dtype).c_str(), *base.tolerance);
      base.reason = buf;
    }
  });

  // Warm-up: module loading, plan selection, allocator growth stay out of the numbers.
  double est_call_ms = 0;
  if (!failure) {
    failure = run_pass("warm-up", host_, [&] {
      std::vector<double> per_call;
      const auto t0 = Clock::now();
      do {
        const auto t = Clock::now();
        call();
        synchronize_device(host_);
        per_call.push_back(ms_since(t));
      } while (ms_since(t0) < m.warmup_ms && per_call.size() < 100000);
      est_call_ms = summarize(per_call).median;
    });
  }

  // One timing pass per mode; a mode that fails fails only its own row.
  struct ModeResult {
    std::optional<Summary> summary;
    bool converged = true;
    int calls_per_sample = 1;
    std::optional<PassFailure> failure;
  };
  std::map<TimingMode, ModeResult> timed;
  if (!failure && wants(m, Pass::timing)) {
    if (on_cuda && !impl_->timer) impl_->timer = std::make_unique<CudaTimer>(host_.cuda_device, host_.l2_cache_bytes);
    const int calls = static_cast<int>(std::clamp(std::ceil(m.batch_sample_ms / std::max(est_call_ms, 1e-3)), 1.0, 10000.0));
    for (auto mode : modes) {
      ModeResult& r = timed[mode];
      r.failure = run_pass(to_string(mode), host_, [&] {
        std::unique_ptr<CapturedCall> graph;
        std::function<double()> sample;
        switch (mode) {
          case TimingMode::wall:
            sample = [&] {
              const auto t = Clock::now();
              call();
              return ms_since(t);
            };
            break;
          case TimingMode::cold:
            sample = [&] { return impl_->timer->cold_ms(call); };
            break;
          case TimingMode::batch:
            r.calls_per_sample = calls;
            sample = [&] { return impl_->timer->batch_ms(call, calls); };
            break;
          case TimingMode::graph:
            r.calls_per_sample = calls;
            graph = std::make_unique<CapturedCall>(host_.cuda_device, call);
            graph->replay_ms(1);  // the first replay uploads the graph
            sample = [&] { return graph->replay_ms(calls); };
            break;
        }
        SampleRun run = sample_until_stable(m, sample);
        r.summary = summarize(run.samples);
        r.converged = run.converged;
        if (m.keep_samples) result.samples.push_back({to_string(mode), std::move(run.samples)});
      });
    }
  }

  pass(Pass::cpu, "cpu", [&] {
    // Host time inside one call: the enqueue cost on CUDA (device idle at the start, so the launch
    // queue never blocks), CPU time of all threads on the CPU. No profiler may be attached.
    if (cupti_attached()) throw std::logic_error("CUPTI is attached during the CPU-overhead pass");
    MeasureSettings cpu_settings = m;
    cpu_settings.max_samples = m.cpu_pass_calls;
    cpu_settings.min_samples = std::min(m.min_samples, m.cpu_pass_calls);
    const SampleRun run = sample_until_stable(cpu_settings, [&] {
      synchronize_device(host_);
      out = at::Tensor();  // freeing the previous output is not part of the call
      double us = 0;
      if (on_cuda) {
        const auto t = Clock::now();
        call();
        us = ms_since(t) * 1e3;
      } else {
        const double t = process_cpu_us();
        call();
        us = process_cpu_us() - t;
      }
      return us;
    });
    const Summary s = summarize(run.samples);
    base.cpu_us_median = s.median, base.cpu_us_p10 = s.p10, base.cpu_us_p90 = s.p90;
  });

#ifdef ATTNBENCH_WITH_CUDA
  if (on_cuda) {
    pass(Pass::memory, "memory", [&] {
      using c10::CachingAllocator::StatType;
      const auto agg = static_cast<size_t>(StatType::AGGREGATE);
      synchronize_device(host_);
      out = at::Tensor();
      const auto device = static_cast<c10::DeviceIndex>(host_.cuda_device);
      const int64_t before = c10::cuda::CUDACachingAllocator::getDeviceStats(device).allocated_bytes[agg].current;
      c10::cuda::CUDACachingAllocator::resetPeakStats(device);
      call();
      synchronize_device(host_);
      const int64_t peak = c10::cuda::CUDACachingAllocator::getDeviceStats(device).allocated_bytes[agg].peak;
      base.peak_mem_mib = static_cast<double>(std::max<int64_t>(0, peak - before - out.nbytes())) / (1 << 20);
    });
  }
#endif

  pass(Pass::ops, "ops", [&] {
    const OpCounts ops = count_aten_ops(call);
    base.aten_ops_per_call = static_cast<int64_t>(ops.top_level.size());
    for (const auto& name : ops.top_level) base.aten_ops += (base.aten_ops.empty() ? "" : " ") + name;
    base.aten_ops_nested_per_call = ops.nested;
    base.aten_copies_per_call = ops.copies;
  });

  if (on_cuda && cupti_available()) {
    pass(Pass::kernels, "kernels", [&] {
      const GpuTrace trace = trace_gpu_activity(call, m.kernel_pass_iterations);
      TraceRecords records =
          trace_records(trace, [&](const GpuActivity& a) { return theoretical_occupancy_pct(a, host_.cuda_device); });
      base.kernels_per_call = records.counts.kernels_per_call;
      base.memcpy_per_call = records.counts.memcpy_per_call;
      base.memset_per_call = records.counts.memset_per_call;
      if (!trace.same_every_iteration) {
        base.add_flag("kernel_set_varies");
        result.notes = "kernel set differs between calls: " + trace.difference;
      }
      for (KernelRow& k : records.kernels) {
        k.point_id = point.id;
        k.backend = loaded.name;
        k.run = options_.info;
        result.kernels.push_back(std::move(k));
      }
    });
  }

  if (failure) {
    base.status = failure->status;
    base.reason = failure->reason;
  }
  for (auto mode : modes) {
    Row row = base;
    row.timing_mode = to_string(mode);
    auto it = timed.find(mode);
    if (it != timed.end()) {
      const ModeResult& r = it->second;
      if (r.failure && row.status == Status::ok) {
        row.status = r.failure->status;
        row.reason = r.failure->reason;
      }
      if (r.summary) {
        const Summary& s = *r.summary;
        row.time_ms_median = s.median, row.time_ms_p10 = s.p10, row.time_ms_p90 = s.p90;
        row.time_rel_spread = s.rel_spread, row.time_rel_noise = s.rel_noise;
        row.samples = s.count;
        row.calls_per_sample = r.calls_per_sample;
        if (!r.converged) row.add_flag("noise_target_missed");
        if (s.median > 0) {
          row.tflops = *base.gflop / s.median;  // GFLOP per ms = TFLOP/s
          if (options_.peak_tflops) {
            row.pct_of_peak = 100 * *row.tflops / *options_.peak_tflops;
            if (*row.pct_of_peak > 100) row.add_flag("above_peak");
          }
        }
      }
    }
    result.rows.push_back(std::move(row));
  }

  out = at::Tensor();
  view.reset();
  inputs = InputTensors();
  release_cached_memory(host_);
  return result;
}

}  // namespace attnbench
