#include <attnbench/sdpa/padded.hpp>

namespace attnbench::sdpa {

namespace {

// For each of `total` packed rows, its row in the padded [batch * width] layout.
at::Tensor padded_rows(const at::Tensor& cu, int64_t batch, int64_t total, int64_t width) {
  const at::Tensor row = at::arange(total, cu.options());
  const at::Tensor seq = at::searchsorted(cu.narrow(0, 1, batch), row, /*out_int32=*/false,
                                          /*right=*/true);
  return seq * width + (row - cu.index_select(0, seq));
}

at::Tensor pad(const at::Tensor& packed, const at::Tensor& rows, int64_t batch, int64_t width) {
  at::Tensor out = at::zeros({batch * width, packed.size(1), packed.size(2)}, packed.options());
  out.index_copy_(0, rows, packed);
  return out.view({batch, width, packed.size(1), packed.size(2)}).transpose(1, 2);  // [b, h, s, d]
}

}  // namespace

at::Tensor padded_attention(const Inputs& in,
                            const std::function<at::Tensor(const Inputs&)>& dense) {
  const Problem& p = in.problem;
  if (p.paged() || !in.cu_seqlens_q || !in.cu_seqlens_kv)
    throw Unsupported("padding takes a contiguous cache; a paged one would need a gather first");
  const int64_t batch = p.batch, s = p.seq_len, skv = p.seq_len_kv;
  const at::Tensor cu_q = in.cu_seqlens_q->to(at::kLong), cu_kv = in.cu_seqlens_kv->to(at::kLong);
  const at::Tensor q_rows = padded_rows(cu_q, batch, in.q.size(0), s);
  const at::Tensor kv_rows = padded_rows(cu_kv, batch, in.k.size(0), skv);
  const at::Tensor q = pad(in.q, q_rows, batch, s);
  const at::Tensor k = pad(in.k, kv_rows, batch, skv), v = pad(in.v, kv_rows, batch, skv);

  // Query i of sequence b stands at key i + kv_len - q_len; it sees keys inside its sequence, its
  // window and its chunk. Padding rows see key 0 alone (no row is all masked) and are dropped afterwards.
  const at::Tensor q_len = (cu_q.narrow(0, 1, batch) - cu_q.narrow(0, 0, batch)).view({batch, 1, 1});
  const at::Tensor kv_len =
      (cu_kv.narrow(0, 1, batch) - cu_kv.narrow(0, 0, batch)).view({batch, 1, 1});
  const at::Tensor i = at::arange(s, cu_q.options()).view({1, s, 1});
  const at::Tensor j = at::arange(skv, cu_q.options()).view({1, 1, skv});
  const at::Tensor pos = i + kv_len - q_len;
  at::Tensor masked = (j >= kv_len).logical_or(i >= q_len);
  if (p.right_edge() >= 0) masked = masked.logical_or(j > pos + p.right_edge());
  if (p.window_left >= 0) masked = masked.logical_or(j < pos - p.window_left);
  if (p.chunk > 0) masked = masked.logical_or(j.div(p.chunk, "floor") != pos.div(p.chunk, "floor"));
  masked = masked.logical_and((i >= q_len).logical_and(j == 0).logical_not()).unsqueeze(1);

  Problem uniform = p;
  uniform.q_lens.clear(), uniform.kv_lens.clear();
  uniform.seq_lens.clear(), uniform.seq_lens_kv.clear();
  Inputs padded{uniform, q, k, v, &masked, in.scale, in.q_scale, in.k_scale, in.v_scale};
  padded.named = in.named;  // a head's sink is every row's
  const at::Tensor out = dense(padded);  // [b, h, s, d]
  return out.transpose(1, 2).reshape({batch * s, p.heads, p.v_dim()}).index_select(0, q_rows);
}

}  // namespace attnbench::sdpa
