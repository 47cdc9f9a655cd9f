// The FlashInfer kernels this plugin compiles, behind a plain interface: nvcc sees FlashInfer and
// CUTLASS, never LibTorch; the backend (flashinfer_backend.cpp) sees neither. Every function throws
// std::runtime_error with FlashInfer's or CUDA's message when it fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnbench::flashinfer_kernels {

// One attention problem in attnbench's layout: q, o [batch, heads, seq_len, head_dim] and k, v
// [batch, kv_heads, seq_len_kv, head_dim], contiguous bf16.
struct Shape {
  int64_t batch, heads, kv_heads, seq_len, seq_len_kv, head_dim;
  bool causal;
  float scale;
};

// Scratch the schedules live in, owned by the caller: FlashInfer plans on the host into pinned
// memory and copies the plan to the device; the float part holds split-KV partial results.
struct Workspace {
  void* int_device;
  void* int_host;  // pinned
  size_t int_bytes;
  void* float_device;
  size_t float_bytes;
};

// The head dims each kernel is compiled for (a template parameter in FlashInfer).
bool prefill_compiled(int64_t head_dim, bool causal);
bool decode_compiled(int64_t head_dim, int64_t group_size);

// Prefill: FlashInfer's Hopper (sm90a) kernel for a ragged batch, which attnbench's [batch, heads,
// seq, dim] layout is once each sequence's rows are offset by its batch index times its heads.
// plan_prefill() schedules the work tiles over the SMs (host, once per shape; it synchronizes
// `stream`); run_prefill() is one launch.
std::vector<int64_t> plan_prefill(const Shape& shape, const Workspace& ws, void* stream);
void run_prefill(const Shape& shape, const Workspace& ws, const std::vector<int64_t>& plan,
                 const void* q, const void* k, const void* v, void* o, void* stream);

// Decode (seq_len 1) against the k, v cache read in place as FlashInfer's paged cache (HND
// layout): pages of `page_size` tokens, `indices` naming them, as a serving engine's cache would.
struct PagedCache {
  int64_t page_size;
  std::vector<int32_t> indptr;  // host copy, batch + 1 entries: the pages of sequence b
  const int32_t* device_indptr;
  const int32_t* device_indices;
  const int32_t* device_last_page_len;
};
std::vector<int64_t> plan_decode(const Shape& shape, const PagedCache& cache, const Workspace& ws,
                                 void* stream);
void run_decode(const Shape& shape, const PagedCache& cache, const Workspace& ws,
                const std::vector<int64_t>& plan, const void* q, const void* k, const void* v,
                void* o, void* stream);

}  // namespace attnbench::flashinfer_kernels
