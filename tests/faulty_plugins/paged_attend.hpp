// What the paged test plugins share: a packed batch's keys and values gathered into one
// contiguous [total_kv, kv_heads, dim] copy (through the page table, or in order as if it were
// contiguous), and causal (bottom-right) or full attention over such a copy, sequence by sequence,
// in float32 on q's device. No window, softcap or sinks.
#pragma once

#include <attnbench/backend.hpp>

#include <ATen/ATen.h>

#include <vector>

namespace paged_probe {

inline bool runs(const attnbench::Problem& p) {
  return p.packed() && !p.windowed() && p.softcap == 0 && !p.sinks && p.chunk == 0 &&
         !p.fp8_kv() && p.dtype != attnbench::DType::fp8_e4m3 && p.kind == "attention";
}

// The cache's rows of every sequence, one after another. `by_table` false: sequence b's pages
// taken as the ones after sequence b-1's, the table never read (a page-blind kernel).
inline at::Tensor gathered(const attnbench::Inputs& in, const at::Tensor& cache, bool by_table) {
  const attnbench::Problem& p = in.problem;
  if (!p.paged()) return cache;
  std::vector<at::Tensor> parts;
  int64_t next = 0;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t pages = (p.kv_len(b) + p.page_size - 1) / p.page_size;
    const at::Tensor ids =
        by_table ? in.page_table->select(0, b).narrow(0, 0, pages).to(at::kLong)
                 : at::arange(next, next + pages, cache.options().dtype(at::kLong));
    next += pages;
    parts.push_back(cache.index_select(0, ids).flatten(0, 1).narrow(0, 0, p.kv_len(b)));
  }
  return at::cat(parts);
}

// Attention of the packed q over packed k and v copies ([total_kv, kv_heads, dim]).
inline at::Tensor attend(const attnbench::Inputs& in, const at::Tensor& k, const at::Tensor& v) {
  const attnbench::Problem& p = in.problem;
  std::vector<int64_t> sizes = in.q.sizes().vec();
  sizes.back() = v.size(-1);
  at::Tensor out = at::empty(sizes, in.q.options());
  int64_t q_at = 0, kv_at = 0;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t rows = p.q_len(b), keys = p.kv_len(b);
    const at::Tensor q = in.q.narrow(0, q_at, rows).transpose(0, 1).to(at::kFloat);
    const at::Tensor kb = k.narrow(0, kv_at, keys).transpose(0, 1).to(at::kFloat)
                              .repeat_interleave(p.group_size(), 0);
    const at::Tensor vb = v.narrow(0, kv_at, keys).transpose(0, 1).to(at::kFloat)
                              .repeat_interleave(p.group_size(), 0);
    at::Tensor scores = at::matmul(q, kb.transpose(-2, -1)) * in.scale;
    if (p.causal) {  // row i stands at key i + keys - rows
      const at::Tensor row = at::arange(rows, scores.options().dtype(at::kLong)).unsqueeze(1);
      const at::Tensor key = at::arange(keys, scores.options().dtype(at::kLong)).unsqueeze(0);
      scores = scores.masked_fill(key > row + (keys - rows), -INFINITY);
    }
    out.narrow(0, q_at, rows).copy_(at::matmul(at::softmax(scores, -1), vb).transpose(0, 1));
    q_at += rows, kv_at += keys;
  }
  return out;
}

}  // namespace paged_probe
