#include "measure/passes/passes.hpp"

namespace attnbench {

void first_call_pass(PassContext& ctx, uint64_t seed) {
  ctx.inputs = make_inputs(ctx.problem, seed);
  ctx.view.emplace(ctx.inputs.view());
  ctx.call();
  synchronize_device(ctx.host);
}

}  // namespace attnbench
