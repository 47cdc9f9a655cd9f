#include "measure/passes/passes.hpp"

namespace attnbench {

CorrectnessResult correctness_pass(PassContext& ctx) {
  return {max_row_rel_error(ctx.inputs, ctx.out)};
}

}  // namespace attnbench
