#include "measure/passes/passes.hpp"

namespace attnbench {

CorrectnessResult correctness_pass(PassContext& ctx) {
  const ReferenceError e = ctx.backward ? backward_error(ctx.inputs, ctx.dq, ctx.dk, ctx.dv)
                                        : forward_error(ctx.inputs, ctx.out);
  return {e.rel_err, e.worst};
}

double fresh_inputs_pass(PassContext& ctx, uint64_t seed) {
  const InputTensors fresh = make_inputs(ctx.problem, seed);
  // fp8: the new numbers under the old scales (the view the backend holds keeps them)
  auto refill = [](at::Tensor& into, const at::Tensor& from, double from_scale, double scale) {
    if (into.scalar_type() == at::kFloat8_e4m3fn)
      into.copy_((dequantized(from, from_scale) / scale).clamp(-448, 448).to(into.scalar_type()));
    else
      into.copy_(from);
  };
  refill(ctx.inputs.q, fresh.q, fresh.q_scale, ctx.inputs.q_scale);
  refill(ctx.inputs.k, fresh.k, fresh.k_scale, ctx.inputs.k_scale);
  refill(ctx.inputs.v, fresh.v, fresh.v_scale, ctx.inputs.v_scale);
  ctx.call();
  synchronize_device(ctx.host);
  return forward_error(ctx.inputs, ctx.out).rel_err;
}

}  // namespace attnbench
