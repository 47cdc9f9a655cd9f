// The textbook causal attention of the study, shared by the naive and inplace plugins:
// matmul, scale, masked_fill, softmax, matmul (with a softcap, a tanh between scale and mask; an
// fp8 cache dequantized to q's dtype first; sinks as a softmax column). Out of place, masked_fill first copies the scores
// (a hidden memcpy on the GPU); in place, masked_fill_ writes into them. Grouped-query inputs get
// k and v expanded to every query head first, the copy a model without a GQA kernel pays.
#pragma once

#include <attnbench/backend.hpp>
#include <attnbench/sdpa/padded.hpp>

#include <ATen/ATen.h>

#include <limits>

namespace attnbench {

inline at::Tensor textbook_attention(const Inputs& in, bool mask_in_place) {
  if (in.problem.fp8_kv()) {  // the cache dequantized to q's dtype first, inside the call
    Problem wide = in.problem;
    wide.kv_dtype.reset();
    const at::Tensor k = (in.k.to(at::kFloat) * in.k_scale).to(in.q.scalar_type());
    const at::Tensor v = (in.v.to(at::kFloat) * in.v_scale).to(in.q.scalar_type());
    return textbook_attention(Inputs{wide, in.q, k, v, in.mask, in.scale, 1, 1, 1,
                                     in.cu_seqlens_q, in.cu_seqlens_kv, in.kv_lens,
                                     in.page_table, in.sinks},
                              mask_in_place);
  }
  if (in.problem.packed())  // padded: a mask per sequence
    return sdpa::padded_attention(
        in, [mask_in_place](const Inputs& d) { return textbook_attention(d, mask_in_place); });
  const int64_t group = in.q.size(1) / in.k.size(1);
  const at::Tensor k = group == 1 ? in.k : in.k.repeat_interleave(group, 1);
  const at::Tensor v = group == 1 ? in.v : in.v.repeat_interleave(group, 1);
  at::Tensor scores = at::matmul(in.q, k.transpose(-2, -1));
  scores = scores * in.scale;
  if (in.problem.softcap > 0)  // Gemma-2's logit cap, before the mask
    scores = at::tanh(scores / in.problem.softcap) * in.problem.softcap;
  if (in.mask) {
    constexpr double kMasked = -std::numeric_limits<double>::infinity();
    if (mask_in_place)
      scores.masked_fill_(*in.mask, kMasked);
    else
      scores = scores.masked_fill(*in.mask, kMasked);
  }
  if (in.sinks) {  // gpt-oss's sinks: a column of the softmax per head, dropped after it
    // In float32, as the sinks are: a logit near 10 rounded to bf16 moves its weight by ~3%.
    std::vector<int64_t> column = scores.sizes().vec();
    column.back() = 1;
    const at::Tensor sink = in.sinks->to(at::kFloat).view({1, -1, 1, 1}).expand(column);
    const at::Tensor weights = at::softmax(at::cat({scores.to(at::kFloat), sink}, -1), -1);
    return at::matmul(weights.narrow(-1, 0, scores.size(-1)).to(v.scalar_type()), v);
  }
  return at::matmul(at::softmax(scores, -1), v);
}

}  // namespace attnbench
