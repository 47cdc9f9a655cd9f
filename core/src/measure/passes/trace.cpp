#include "measure/device/cuda_check.hpp"
#include "measure/device/cupti_tracer.hpp"
#include "measure/op_tracer.hpp"
#include "measure/passes/passes.hpp"

#include <algorithm>
#include <set>

namespace attnbench {

namespace {

// Everything that began before `from`: CUPTI's first call with a new subscriber costs milliseconds
// of host time (5.7 ms inside naive's first bmm on the H200), which a trace must not show as the
// backend's.
void drop_before(TraceResult& r, int64_t from) {
  auto early = [&](const CpuSpan& s) { return s.start_ns < from; };
  r.cpu.erase(std::remove_if(r.cpu.begin(), r.cpu.end(), early), r.cpu.end());
  r.calls.erase(r.calls.begin());
  if (!r.gpu) return;
  auto& acts = r.gpu->activities;
  acts.erase(std::remove_if(acts.begin(), acts.end(),
                            [](const GpuActivity& a) { return a.iteration == 0; }),
             acts.end());
  std::set<uint32_t> kept;
  for (const GpuActivity& a : acts) kept.insert(a.correlation_id);
  auto& calls = r.gpu->launches;
  calls.erase(std::remove_if(calls.begin(), calls.end(),
                             [&](const ApiCall& c) { return !kept.count(c.correlation_id); }),
              calls.end());
}

}  // namespace

TraceResult trace_pass(PassContext& ctx) {
  TraceResult result;
  result.thread = this_thread_id();
  result.os_thread = this_os_thread_id();
  const int calls = ctx.settings.kernel_pass_iterations + 1;  // the first one is not kept
  auto one_call = [&] {
    const int64_t start = steady_now_ns();
    ctx.call();
    result.calls.emplace_back(start, steady_now_ns());
  };
  result.cpu = record_cpu_spans([&] {
    if (ctx.on_cuda() && cupti_available()) {
      result.gpu = trace_gpu_activity(one_call, calls, /*with_launches=*/true);
    } else {
      for (int i = 0; i < calls; ++i) one_call();
    }
  });
  drop_before(result, result.calls.at(1).first);
  return result;
}

}  // namespace attnbench
