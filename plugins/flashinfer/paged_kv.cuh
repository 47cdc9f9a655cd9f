// A PagedCache (kernels.hpp) as FlashInfer's paged_kv_t, for decode.cu and served.cu.
#pragma once

#include "kernels.hpp"

#include <flashinfer/page.cuh>

namespace attnbench::flashinfer_kernels {

template <typename T>
flashinfer::paged_kv_t<T, int32_t> paged_kv(const Shape& s, const PagedCache& c, const void* k,
                                            const void* v) {
  // NHD: attnbench's pages [page_size, kv_heads, dim] (a packed [total_kv, kv_heads, dim] cache
  // is its pages of one token): page stride page_size * kv_heads * dim, row stride kv_heads *
  // dim, head stride dim. HND: a page of sequence b is [kv_heads, page_size, dim] out of b's
  // [kv_heads, seq_len_kv, dim]: page stride page_size * dim, head stride seq_len_kv * dim, row
  // stride dim. (The strides are page, then NHD's n and h, or HND's h and n.)
  const int64_t nhd[3] = {c.page_size * s.kv_heads * s.head_dim, s.kv_heads * s.head_dim,
                          s.head_dim};
  const int64_t hnd[3] = {c.page_size * s.head_dim, s.seq_len_kv * s.head_dim, s.head_dim};
  const int64_t* strides = c.nhd ? nhd : hnd;
  return {static_cast<uint32_t>(s.kv_heads),
          static_cast<uint32_t>(c.page_size),
          static_cast<uint32_t>(s.head_dim),
          static_cast<uint32_t>(s.batch),
          c.nhd ? flashinfer::QKVLayout::kNHD : flashinfer::QKVLayout::kHND,
          static_cast<T*>(const_cast<void*>(k)),
          static_cast<T*>(const_cast<void*>(v)),
          strides,
          strides,
          const_cast<int32_t*>(c.device_indices),
          const_cast<int32_t*>(c.device_indptr),
          const_cast<int32_t*>(c.device_last_page_len)};
}

}  // namespace attnbench::flashinfer_kernels
