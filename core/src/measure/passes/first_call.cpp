#include "measure/passes/passes.hpp"

#include <chrono>

namespace attnbench {

double first_call_pass(PassContext& ctx, uint64_t seed) {
  ctx.inputs = make_inputs(ctx.problem, seed);
  ctx.input_prints = input_prints(ctx.inputs);
  ctx.view.emplace(ctx.inputs.view());
  ctx.shifts.seed(seed ^ 0x5417f7ULL);
  synchronize_device(ctx.host);  // the inputs' kernels are not the call's
  if (ctx.on_cuda()) ctx.unheld_at_start_mib = unheld_device_mib(ctx.host, ctx.monitor);
  const auto start = std::chrono::steady_clock::now();
  if (ctx.problem.direction == Direction::bwd) {
    ctx.backward = ctx.backend.prepare_backward(*ctx.view);
    if (!ctx.backward)
      throw Unsupported(ctx.backend.name() +
                        " has no backward pass (Backend::prepare_backward returns none)");
  }
  ctx.call();
  synchronize_device(ctx.host);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace attnbench
