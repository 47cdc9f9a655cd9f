#include "measure/passes/passes.hpp"

#include "measure/op_counter.hpp"

namespace attnbench {

OpCounts ops_pass(PassContext& ctx) {
  return count_aten_ops([&] { ctx.call(); });
}

}  // namespace attnbench
