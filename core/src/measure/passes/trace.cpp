#include "measure/device/cuda_check.hpp"
#include "measure/device/cupti_tracer.hpp"
#include "measure/op_tracer.hpp"
#include "measure/passes/passes.hpp"

namespace attnbench {

TraceResult trace_pass(PassContext& ctx) {
  TraceResult result;
  result.thread = this_thread_id();
  result.os_thread = this_os_thread_id();
  const int calls = ctx.settings.kernel_pass_iterations;
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
  return result;
}

}  // namespace attnbench
