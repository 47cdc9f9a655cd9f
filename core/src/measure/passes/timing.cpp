#include "measure/passes/passes.hpp"

#include "base/stats.hpp"
#include "measure/device/cuda_timing.hpp"
#include "measure/device/device_monitor.hpp"
#include "measure/device/sm_clock_span.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <thread>

namespace attnbench {

namespace {

TimingResult timed_samples(PassContext& ctx, TimingMode mode, int calls_per_sample,
                           std::unique_ptr<BackwardPass>& graph_backward,
                           std::unique_ptr<CapturedCall>& graph) {
  TimingResult result;
  result.mode = mode;
  auto call = [&] { ctx.call(); };
  std::function<double()> sample;
  switch (mode) {
    case TimingMode::wall:
      sample = [&] {
        const auto t = std::chrono::steady_clock::now();
        call();
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t)
            .count();
      };
      break;
    case TimingMode::cold: sample = [&] { return ctx.timer->cold_ms(call); }; break;
    case TimingMode::batch:
      result.calls_per_sample = calls_per_sample;
      sample = [&] { return ctx.timer->batch_ms(call, calls_per_sample); };
      break;
    case TimingMode::graph:
      result.calls_per_sample = calls_per_sample;
      // The caching allocator's cache from earlier passes is not the capture's to inherit: a
      // capture that runs out of memory must be the backend's doing.
      release_cached_memory(ctx.host);
      if (!ctx.backward && ctx.problem.direction == Direction::bwd) {
        // Autograd runs a backward on the stream its forward ran on: the forward is made again
        // on the capture stream, and that BackwardPass is what the graph replays.
        graph = std::make_unique<CapturedCall>(
            ctx.host.cuda_device,
            [&] { graph_backward->run(ctx.inputs.grad_out, ctx.dq, ctx.dk, ctx.dv); },
            [&] {
              graph_backward = ctx.backend.prepare_backward(*ctx.view);
              if (!graph_backward) throw Unsupported("no backward pass to capture");
            });
      } else {
        graph = std::make_unique<CapturedCall>(ctx.host.cuda_device, call);
      }
      graph->replay_ms(1);  // the first replay uploads the graph
      sample = [&] { return graph->replay_ms(calls_per_sample); };
      break;
  }
  // A forward call meets new values in every sample, q's, k's, v's and the page table's (a
  // backward replays what its forward saved).
  const bool forward = ctx.problem.direction == Direction::fwd;
  const DeviceMonitor* monitor = ctx.monitor;
  // A sample's clock: its mean during the sample where it can be read (a sample shorter than the
  // span's resolution has none), else NVML's reading right after it.
  SmClockSpan* span = mode == TimingMode::wall ? nullptr : ctx.clock_span;
  result.power = ctx.settings.power;
  std::optional<BurstGate> gate;
  if (result.power == PowerMode::burst && monitor && ctx.burst_reference_mhz)
    gate.emplace(*ctx.burst_reference_mhz, ctx.settings.cooldown_max_s);
  double dropped_s = 0;  // spent on samples the gate dropped
  auto timed = [&, sample] {
    while (true) {
      if (forward) {
        ctx.move_inputs();
        // Done before the sample starts: a graph replays on a stream of its own, which nothing
        // orders after this one (on the H200 the last replay of large ragged points read q half
        // moved, and every backend's graph row read `wrong`).
        synchronize_device(ctx.host);
      }
      if (span) span->open();
      const double began = steady_seconds();
      const double ms = sample();
      std::optional<double> clock = span ? mean_clock_mhz(span->close()) : std::nullopt;
      if (!clock && monitor) clock = monitor->sm_clock_mhz();
      const double rest = gate && clock ? gate->rest_after(*clock) : 0;
      if (rest == 0) {
        if (clock) result.sample_clock_mhz.push_back(*clock);
        return ms;
      }
      dropped_s += steady_seconds() - began;
      std::this_thread::sleep_for(std::chrono::duration<double>(rest));
    }
  };
  // The sampler's time limits count the kept samples, not the dropped ones nor the rests (at 32k
  // keys nine dropped backward samples of 150 ms once left one kept sample in max_time_s).
  auto sampling_s = [&] {
    return steady_seconds() - dropped_s - (gate ? gate->rested_s() : 0);
  };
  if (monitor) result.device_start = monitor->read();
  SampleRun run = sample_until_stable(ctx.settings.sampling(), timed, sampling_s);
  if (monitor) result.device_end = monitor->read();
  if (gate) {
    result.dropped_for_clock = gate->dropped();
    result.rested_s = gate->rested_s();
    result.clock_recovered = !gate->gave_up();
    result.rested_clock_mhz = gate->rested_mhz();
    result.highest_clock_mhz = gate->highest_mhz();
  }
  if (forward) {
    synchronize_device(ctx.host);
    result.followed_rel_err = forward_error(ctx.inputs, ctx.out).judged();
  }
  result.summary = summarize(run.samples);
  result.converged = run.converged;
  result.samples = std::move(run.samples);
  return result;
}

}  // namespace

TimingResult timing_pass(PassContext& ctx, TimingMode mode, int calls_per_sample) {
  std::unique_ptr<BackwardPass> graph_backward;  // declared first: the graph replays it
  std::unique_ptr<CapturedCall> graph;
  // A backward capture makes its own forward on the capture stream: the first call's is let go
  // meanwhile (two forwards' saved state at once made math's 16k backward oom), and made again
  // for the passes after this one.
  const bool own_forward = mode == TimingMode::graph && ctx.backward;
  if (own_forward) ctx.backward.reset();
  auto restore = [&] {
    graph.reset();
    graph_backward.reset();
    if (own_forward) ctx.backward = ctx.backend.prepare_backward(*ctx.view);
  };
  TimingResult result;
  try {
    result = timed_samples(ctx, mode, calls_per_sample, graph_backward, graph);
  } catch (...) {
    restore();
    throw;
  }
  restore();
  return result;
}

}  // namespace attnbench
