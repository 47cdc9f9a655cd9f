#include "measure/passes/passes.hpp"

namespace attnbench {

void first_call_pass(PassContext& ctx, uint64_t seed) {
  ctx.inputs = make_inputs(ctx.problem, seed);
  ctx.view.emplace(ctx.inputs.view());
  if (ctx.problem.direction == Direction::bwd) {
    ctx.backward = ctx.backend.prepare_backward(*ctx.view);
    if (!ctx.backward)
      throw Unsupported(ctx.backend.name() +
                        " has no backward pass (Backend::prepare_backward returns none)");
  }
  ctx.call();
  synchronize_device(ctx.host);
}

}  // namespace attnbench
