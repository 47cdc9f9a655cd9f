// The textbook causal attention of the study, shared by the naive and inplace plugins:
// matmul, scale, masked_fill, softmax, matmul (with a softcap, a tanh between scale and mask; an
// fp8 cache dequantized to q's dtype first; sinks as a softmax column; a sparse point's selected
// tokens gathered first). Out of place, masked_fill first copies the scores
// (a hidden memcpy on the GPU); in place, masked_fill_ writes into them. Grouped-query inputs get
// k and v expanded to every query head first, the copy a model without a GQA kernel pays.
#pragma once

#include <attnbench/backend.hpp>
#include <attnbench/sdpa/padded.hpp>

#include <ATen/ATen.h>

#include <limits>

namespace attnbench {

// Sparse attention (kind dsa: DeepSeek's), in the same ops: each query row's selected tokens
// gathered from the cache (index_select through the page table or the offsets), its scores,
// the unused entries (-1) masked, softmax, the same tokens' values. An fp8 cache is dequantized
// to q's dtype after the gather.
inline at::Tensor textbook_sparse_attention(const Inputs& in, bool mask_in_place) {
  const Problem& p = in.problem;
  const at::Tensor* given = in.input("indices");
  if (!given) throw Unsupported("a sparse point without its indices");
  const int64_t topk = given->size(-1), width = in.k.size(-1);
  const at::Tensor indices = given->reshape({-1, topk}).to(at::kLong);  // [rows, topk]
  const int64_t rows = indices.size(0);
  // Each row's sequence, and where that sequence's token t is among the cache's rows.
  const auto longs = indices.options();
  at::Tensor sequence, token;
  const at::Tensor cache = in.k.reshape({-1, width});  // every token of the cache, a row each
  if (!p.packed()) {
    sequence = at::arange(p.batch, longs).repeat_interleave(p.seq_len);
    token = sequence.unsqueeze(1) * p.seq_len_kv + indices.clamp_min(0);
  } else {
    const at::Tensor cu = in.cu_seqlens_q->to(at::kLong);
    sequence = at::repeat_interleave(at::arange(p.batch, longs), cu.narrow(0, 1, p.batch) - cu.narrow(0, 0, p.batch),
                                     0, rows);
    const at::Tensor t = indices.clamp_min(0);
    if (in.page_table) {
      const at::Tensor pages = in.page_table->to(at::kLong).index_select(0, sequence);
      token = pages.gather(1, t.div(p.page_size, "floor")) * p.page_size + t.remainder(p.page_size);
    } else {
      token = in.cu_seqlens_kv->to(at::kLong).index_select(0, sequence).unsqueeze(1) + t;
    }
  }
  at::Tensor keys = cache.index_select(0, token.view({-1})).view({rows, topk, width});
  if (p.fp8_kv()) keys = (keys.to(at::kFloat) * in.k_scale).to(in.q.scalar_type());
  const at::Tensor q = p.packed() ? in.q : in.q.transpose(1, 2).reshape({rows, p.heads, width});
  at::Tensor scores = at::einsum("nhd,ntd->nht", {q, keys});
  scores = scores * in.scale;
  const at::Tensor unused = (indices < 0).unsqueeze(1);  // [rows, 1, topk]
  constexpr double kMasked = -std::numeric_limits<double>::infinity();
  if (mask_in_place)
    scores.masked_fill_(unused, kMasked);
  else
    scores = scores.masked_fill(unused, kMasked);
  const at::Tensor out =
      at::einsum("nht,ntd->nhd", {at::softmax(scores, -1), keys.narrow(-1, 0, p.v_dim())});
  if (p.packed()) return out;
  return out.view({p.batch, p.seq_len, p.heads, p.v_dim()}).transpose(1, 2);
}

// DSA's lightning indexer (kind dsa_indexer) in ATen ops, a sequence at a time: every head's q·k
// over the sequence's keys, scaled, ReLU, weighted by `weights` and summed over the heads; the
// keys after each row's position masked; the top index_topk by score (the valid first, -1 after).
// fp8 q and keys are dequantized first.
inline at::Tensor textbook_indexer(const Inputs& in) {
  const Problem& p = in.problem;
  const at::Tensor& weights = *in.input("weights");
  const int64_t topk = static_cast<int64_t>(p.extra_number("index_topk", 2048));
  const int64_t width = in.k.size(-1);
  auto widened = [&](const at::Tensor& t, double scale) {
    return t.scalar_type() == at::kFloat8_e4m3fn ? t.to(at::kFloat) * scale : t.to(at::kFloat);
  };
  std::vector<at::Tensor> out;
  int64_t row = 0, key = 0;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t n = p.q_len(b), keys = p.kv_len(b);
    at::Tensor q, k, w;
    if (!p.packed()) {
      q = in.q[b].transpose(0, 1), k = in.k[b][0], w = weights[b];
    } else {
      q = in.q.narrow(0, row, n), w = weights.narrow(0, row, n);
      if (in.page_table) {
        const int64_t pages = (keys + p.page_size - 1) / p.page_size;
        k = in.k.index_select(0, (*in.page_table)[b].narrow(0, 0, pages).to(at::kLong))
                .reshape({-1, width})
                .narrow(0, 0, keys);
      } else {
        k = in.k.narrow(0, key, keys).reshape({keys, width});
      }
    }
    at::Tensor scores = at::relu(at::einsum("nhd,td->nht", {widened(q, in.q_scale), widened(k, in.k_scale)}) * in.scale);
    scores = (scores * w.to(at::kFloat).unsqueeze(-1)).sum(1);  // [n, keys]
    const at::Tensor pos = at::arange(n, scores.options().dtype(at::kLong)) + (keys - n);
    const at::Tensor ahead = at::arange(keys, pos.options()).unsqueeze(0) > pos.unsqueeze(1);
    scores = scores.masked_fill(ahead, -std::numeric_limits<double>::infinity());
    const auto [best, chosen] = scores.topk(std::min(topk, keys), 1);
    at::Tensor picked = at::where(at::isinf(best), at::full_like(chosen, -1), chosen).to(at::kInt);
    if (picked.size(1) < topk)
      picked = at::cat({picked, at::full({n, topk - picked.size(1)}, -1, picked.options())}, 1);
    out.push_back(picked);
    row += n, key += keys;
  }
  return p.packed() ? at::cat(out, 0) : at::stack(out, 0);
}

inline at::Tensor textbook_attention(const Inputs& in, bool mask_in_place) {
  if (in.input("weights") && in.problem.kind == "dsa_indexer") return textbook_indexer(in);
  if (in.input("indices")) return textbook_sparse_attention(in, mask_in_place);
  if (in.problem.fp8_kv()) {  // the cache dequantized to q's dtype first, inside the call
    Problem wide = in.problem;
    wide.kv_dtype.reset();
    const at::Tensor k = (in.k.to(at::kFloat) * in.k_scale).to(in.q.scalar_type());
    const at::Tensor v = (in.v.to(at::kFloat) * in.v_scale).to(in.q.scalar_type());
    return textbook_attention(Inputs{wide, in.q, k, v, in.mask, in.scale, 1, 1, 1,
                                     in.cu_seqlens_q, in.cu_seqlens_kv, in.kv_lens,
                                     in.page_table, in.named},
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
  if (const at::Tensor* sinks = in.input("sinks")) {  // gpt-oss's: a softmax column per head
    // In float32, as the sinks are: a logit near 10 rounded to bf16 moves its weight by ~3%.
    std::vector<int64_t> column = scores.sizes().vec();
    column.back() = 1;
    const at::Tensor sink = sinks->to(at::kFloat).view({1, -1, 1, 1}).expand(column);
    const at::Tensor weights = at::softmax(at::cat({scores.to(at::kFloat), sink}, -1), -1);
    return at::matmul(weights.narrow(-1, 0, scores.size(-1)).to(v.scalar_type()), v);
  }
  return at::matmul(at::softmax(scores, -1), v);
}

}  // namespace attnbench
