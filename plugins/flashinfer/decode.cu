// Decode: FlashInfer's batch decode kernel over a paged KV cache (its CUDA-core kernel, with the
// split-KV scheduler of DecodePlan and the merge kernel when a sequence is split), bf16, for the
// instances CMakeLists.txt lists and every GQA group size FlashInfer dispatches.
#include "check.cuh"
#include "decode.cuh"
#include "kernels.hpp"
#include "paged_kv.cuh"

#include <stdexcept>
#include <string>

namespace attnbench::flashinfer_kernels {
// The instances CMakeLists.txt generated, as ATTNBENCH_FLASHINFER_DECODE(head_dim, window,
// softcap) lines.
#define ATTNBENCH_FLASHINFER_DECODE_INSTANCES "flashinfer_decode_instances.inc"

namespace {

using T = nv_bfloat16;

constexpr int64_t instance(int64_t head_dim, bool window, bool softcap) {
  return head_dim * 4 + (window ? 2 : 0) + (softcap ? 1 : 0);
}

std::string variant_name(const Shape& s) {
  return "head_dim " + std::to_string(s.head_dim) + (s.window_left >= 0 ? ", window" : "") +
         (s.softcap > 0 ? ", softcap" : "");
}

}  // namespace

bool decode_compiled(int64_t head_dim, int64_t group_size, bool window, bool softcap) {
  const bool group = group_size == 1 || group_size == 2 || group_size == 3 || group_size == 4 ||
                     group_size == 6 || group_size == 8 || group_size == 16;
  switch (instance(head_dim, window, softcap)) {
#define ATTNBENCH_FLASHINFER_DECODE(D, W, S) \
  case instance(D, W, S):                    \
    return group;
#include ATTNBENCH_FLASHINFER_DECODE_INSTANCES
#undef ATTNBENCH_FLASHINFER_DECODE
    default: return false;
  }
}

std::vector<int64_t> plan_decode(const Shape& s, const PagedCache& c, const Workspace& ws,
                                 void* stream_ptr) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  flashinfer::DecodePlanInfo info;
  std::vector<int32_t> indptr = c.indptr;
  const auto batch = static_cast<uint32_t>(s.batch), heads = static_cast<uint32_t>(s.heads),
             group = static_cast<uint32_t>(s.heads / s.kv_heads),
             page_size = static_cast<uint32_t>(c.page_size);
  cudaError_t status = cudaErrorNotSupported;
  switch (instance(s.head_dim, s.window_left >= 0, s.softcap > 0)) {
#define ATTNBENCH_FLASHINFER_DECODE(D, W, S)                                             \
  case instance(D, W, S):                                                                \
    status = plan_decode_instance<D, W, S>(info, ws, indptr.data(), batch, heads, group, \
                                           page_size, stream);                           \
    break;
#include ATTNBENCH_FLASHINFER_DECODE_INSTANCES
#undef ATTNBENCH_FLASHINFER_DECODE
    default:
      throw std::runtime_error("FlashInfer decode: no kernel compiled for " + variant_name(s));
  }
  check(status, "DecodePlan");
  check(cudaStreamSynchronize(stream), "plan copy");
  return info.ToVector();
}

void run_decode(const Shape& s, const PagedCache& c, const Workspace& ws,
                const std::vector<int64_t>& plan, const void* q, const void* k, const void* v,
                void* o, void* stream_ptr) {
  flashinfer::DecodePlanInfo info;
  info.FromVector(plan);
  DecodeParams p;
  p.q = static_cast<T*>(const_cast<void*>(q));
  p.paged_kv = paged_kv<T>(s, c, k, v);
  p.o = static_cast<T*>(o);
  p.lse = nullptr;
  p.num_qo_heads = static_cast<uint32_t>(s.heads);
  p.q_stride_n = static_cast<int32_t>(s.heads * s.head_dim);  // q is [batch, heads, 1, dim]
  p.q_stride_h = static_cast<int32_t>(s.head_dim);
  p.window_left = static_cast<int32_t>(s.window_left);
  p.logits_soft_cap = s.softcap;
  p.sm_scale = s.scale;
  p.rope_rcp_scale = p.rope_rcp_theta = 1.f;
  p.request_indices =
      flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_device, info.request_indices_offset);
  p.kv_tile_indices =
      flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_device, info.kv_tile_indices_offset);
  p.o_indptr = flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_device, info.o_indptr_offset);
  p.kv_chunk_size_ptr =
      flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_device, info.kv_chunk_size_ptr_offset);
  p.padded_batch_size = static_cast<uint32_t>(info.padded_batch_size);
  T* tmp_v = nullptr;
  float* tmp_s = nullptr;
  if (info.split_kv) {
    tmp_v = flashinfer::GetPtrFromBaseOffset<T>(ws.float_device, info.v_offset);
    tmp_s = flashinfer::GetPtrFromBaseOffset<float>(ws.float_device, info.s_offset);
  }
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  cudaError_t status = cudaErrorNotSupported;
  switch (instance(s.head_dim, s.window_left >= 0, s.softcap > 0)) {
#define ATTNBENCH_FLASHINFER_DECODE(D, W, S)                  \
  case instance(D, W, S):                                     \
    status = launch_decode<D, W, S>(p, tmp_v, tmp_s, stream); \
    break;
#include ATTNBENCH_FLASHINFER_DECODE_INSTANCES
#undef ATTNBENCH_FLASHINFER_DECODE
    default:
      throw std::runtime_error("FlashInfer decode: no kernel compiled for " + variant_name(s));
  }
  check(status, "decode");
}

}  // namespace attnbench::flashinfer_kernels
