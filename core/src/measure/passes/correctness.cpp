#include "measure/passes/passes.hpp"

namespace attnbench {

CorrectnessResult correctness_pass(PassContext& ctx) {
  const ReferenceError e = ctx.backward ? backward_error(ctx.inputs, ctx.dq, ctx.dk, ctx.dv)
                                        : forward_error(ctx.inputs, ctx.out);
  return {e.rel_err, e.worst};
}

}  // namespace attnbench
