#include "measure/passes/passes.hpp"

namespace attnbench {

namespace {

// Before a checked call: the last result's memory poisoned (forward: then let go, so that the
// allocator's next block of its size, the one the call most likely gets, holds NaN; backward: the
// gradients the backend is handed to fill). Whatever the call does not write fails the check.
// What calls update in place (a recurrent state) is put back as drawn, which the check starts from.
void poison_result(PassContext& ctx) {
  kind_tensors(ctx.problem).restore(ctx.inputs);
  if (ctx.backward) {
    for (const at::Tensor* t : {&ctx.dq, &ctx.dk, &ctx.dv}) poison(*t);
  } else {
    poison(ctx.out);
    ctx.out = at::Tensor();
  }
}

}  // namespace

CorrectnessResult correctness_pass(PassContext& ctx) {
  poison_result(ctx);
  ctx.call();
  synchronize_device(ctx.host);
  CorrectnessResult result;
  result.changed_input = changed_input_since_drawn(ctx);
  if (!result.changed_input.empty()) return result;  // destroyed inputs have no reference
  const ReferenceError e = ctx.backward ? backward_error(ctx.inputs, ctx.dq, ctx.dk, ctx.dv)
                                        : forward_error(ctx.inputs, ctx.out);
  result.rel_err = e.rel_err;
  result.worst = e.worst;
  result.whole_rel_err = e.whole_rel_err;
  if (ctx.backward) return result;
  result.variants = check_variants(ctx.inputs, ctx.out);
  const Problem& p = ctx.problem;
  for (const auto& [variant, wider] : own_call_spreads(p)) {
    // A variant's own call, q wider so that it bites (a cap bends the scores), then q put back.
    const at::Tensor drawn = ctx.inputs.q.clone();
    ctx.inputs.q.mul_(wider);
    poison_result(ctx);
    ctx.call();
    synchronize_device(ctx.host);
    for (VariantCheck& bitten : check_variants(ctx.inputs, ctx.out, variant))
      for (VariantCheck& v : result.variants)
        if (v.name == bitten.name) v = bitten, v.own_call = true;
    ctx.inputs.q.copy_(drawn);
  }
  if (p.paged() && p.page_order == PageOrder::in_order) {
    // Each sequence's pages one after another also reads right from a backend that ignores the
    // table: the table scattered for one more checked call, then put back as it was drawn.
    const at::Tensor drawn = scatter_pages(ctx.inputs, ctx.inputs.seed ^ 0x5ca77e6ULL);
    poison_result(ctx);
    ctx.call();
    synchronize_device(ctx.host);
    result.scattered_rel_err = forward_error(ctx.inputs, ctx.out).judged();
    ctx.inputs.page_table.copy_(drawn);
  }
  return result;
}

std::string changed_input_since_drawn(const PassContext& ctx) {
  return changed_input(ctx.input_prints, input_prints(ctx.inputs));
}

double fresh_inputs_pass(PassContext& ctx, uint64_t seed) {
  // In place, one tensor at a time: no second set of inputs (decode caches are gigabytes), and
  // what earlier passes left cached is released first.
  poison_result(ctx);
  ctx.release_result();
  release_cached_memory(ctx.host);
  at::manual_seed(seed);
  for (auto [tensor, scale] : {std::pair{&ctx.inputs.q, ctx.inputs.q_scale},
                               {&ctx.inputs.k, ctx.inputs.k_scale},
                               {&ctx.inputs.v, ctx.inputs.v_scale}}) {
    if (tensor->scalar_type() == at::kFloat8_e4m3fn)  // fp8: new numbers under the old scale
      tensor->copy_((at::randn(tensor->sizes(), tensor->options().dtype(at::kFloat)) / scale)
                        .clamp(-448, 448));
    else
      tensor->normal_();
  }
  ctx.call();
  synchronize_device(ctx.host);
  return forward_error(ctx.inputs, ctx.out).judged();
}

}  // namespace attnbench
