#include "measure/passes/passes.hpp"

#include "base/stats.hpp"
#include "measure/device/cupti_tracer.hpp"
#include "measure/device/host_clock.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <stdexcept>

namespace attnbench {

namespace {

double process_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

}  // namespace

CpuResult cpu_pass(PassContext& ctx) {
  // Host time inside one call: the enqueue cost on CUDA (device idle at the start, so the launch
  // queue never blocks), CPU time of all threads on the CPU. No profiler may be attached.
  if (cupti_attached()) throw std::logic_error("CUPTI is attached during the CPU-overhead pass");
  SamplingRule settings = ctx.settings.sampling();
  settings.max_samples = ctx.settings.cpu_pass_calls;
  settings.min_samples = std::min(ctx.settings.min_samples, ctx.settings.cpu_pass_calls);
  CpuResult result;
  result.host_mhz = host_clock_mhz();
  long preempted = 0, migrated = 0;
  const SampleRun run = sample_until_stable(settings, [&] {
    synchronize_device(ctx.host);
    ctx.release_result();  // freeing the previous result is not part of the call
    const long switches = involuntary_switches();
    const int cpu = current_cpu();
    double us = 0;
    if (ctx.on_cuda()) {
      const auto t = std::chrono::steady_clock::now();
      ctx.call();
      us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
    } else {
      const double t = process_cpu_us();
      ctx.call();
      us = process_cpu_us() - t;
    }
    preempted += involuntary_switches() - switches;
    migrated += current_cpu() != cpu;
    return us;
  });
  result.us = summarize(run.samples);
  const double calls = static_cast<double>(std::max<size_t>(run.samples.size(), 1));
  result.preempted_per_call = static_cast<double>(preempted) / calls;
  result.migrated_per_call = static_cast<double>(migrated) / calls;
  return result;
}

}  // namespace attnbench
