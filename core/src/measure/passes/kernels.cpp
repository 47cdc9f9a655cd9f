#include "measure/passes/passes.hpp"

#include "measure/device/cupti_tracer.hpp"
#include "measure/kernel_stats.hpp"

namespace attnbench {

KernelsResult kernels_pass(PassContext& ctx) {
  const GpuTrace trace =
      trace_gpu_activity([&] { ctx.call(); }, ctx.settings.kernel_pass_iterations);
  return kernel_records(trace, [&](const GpuActivity& a) {
    return theoretical_occupancy_pct(a, ctx.host.cuda_device);
  });
}

}  // namespace attnbench
