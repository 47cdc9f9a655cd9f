// The kernel's host interface: plain pointers and sizes, no LibTorch, so nvcc never sees ATen.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace wmma_attention {

// q [batch, heads, seq_q, head_dim]; k, v [batch, kv_heads, seq_kv, head_dim]; out like q; all
// contiguous, bf16 or fp16. A causal mask is aligned bottom-right: query i sees keys up to
// i + seq_kv - seq_q.
struct Args {
  const void* q;
  const void* k;
  const void* v;
  void* out;
  int64_t batch, heads, kv_heads, seq_q, seq_kv, head_dim;
  bool causal;
  bool bf16;  // else fp16
  float scale;
};

// Launches the forward kernel on `stream`; throws std::runtime_error for a shape it does not take
// (head_dim other than 64 or 128) or a launch that fails.
void launch_forward(const Args& args, cudaStream_t stream);

}  // namespace wmma_attention
