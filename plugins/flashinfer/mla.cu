// MLA's absorbed decode: FlashInfer's Hopper MLA kernel (BatchMLAPageAttentionHopper, as its
// csrc/batch_mla_sm90_run.cu calls it) over one paged latent cache, scheduled by MLAPlan. The
// cache's first `latent` columns are the compressed kv (and v), its last `rope` columns the rope
// keys: two views of one tensor through strides, as q's nope (absorbed) and rope parts are. The
// cache is bf16, or fp8_e4m3 under one scale (the kernel's FP8 KV path, bf16 queries).
#include "check.cuh"
#include "kernels.hpp"

#include <flashinfer/attention/mla_hopper.cuh>
#include <flashinfer/attention/mla_params.cuh>
#include <flashinfer/attention/scheduler.cuh>
#include <flashinfer/fastdiv.cuh>

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <stdexcept>
#include <string>

namespace attnbench::flashinfer_kernels {

namespace {
constexpr int64_t kLatent = 512, kRope = 64;  // the one instance compiled: DeepSeek-V3's widths
}

bool mla_compiled(int64_t latent, int64_t rope) { return latent == kLatent && rope == kRope; }

std::vector<int64_t> plan_mla(const MlaShape& s, const Workspace& ws, void* stream_ptr) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  std::vector<int32_t> qo_indptr = s.qo_indptr, page_indptr = s.page_indptr, kv_len = s.kv_len;
  flashinfer::MLAPlanInfo info;
  size_t staged_bytes = 0;
  check(flashinfer::MLAPlan<int32_t>(ws.float_device, ws.float_bytes, ws.int_device, ws.int_host,
                                     ws.int_bytes, info, staged_bytes, qo_indptr.data(),
                                     page_indptr.data(), kv_len.data(),
                                     static_cast<uint32_t>(s.batch),
                                     static_cast<uint32_t>(s.heads),
                                     static_cast<uint32_t>(s.latent), s.causal, stream),
        "MLAPlan");
  // MLAPlan writes the schedule into the pinned buffer only (FlashInfer's wrapper stages it):
  // copy what it wrote to the device.
  check(cudaMemcpyAsync(ws.int_device, ws.int_host, staged_bytes, cudaMemcpyHostToDevice, stream),
        "plan copy");
  check(cudaStreamSynchronize(stream), "plan copy");
  return info.ToVector();
}

namespace {

// One launch of the kernel over a cache of KV (bf16, or fp8_e4m3 that it dequantizes to bf16 in
// shared memory with the cache's scale).
template <class KV>
void launch_mla(const MlaShape& s, const Workspace& ws, const std::vector<int64_t>& plan,
                const void* q, const void* cache, void* o, cudaStream_t stream) {
  flashinfer::MLAPlanInfo info;
  info.FromVector(plan);
  using T = __nv_bfloat16;
  using Params = flashinfer::MLAParams<T, KV, T, int32_t>;
  Params p{};
  auto at = [&](int64_t offset) {
    return flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_device, offset);
  };
  const int64_t width = s.latent + s.rope;
  T* q_base = static_cast<T*>(const_cast<void*>(q));
  KV* kv_base = static_cast<KV*>(const_cast<void*>(cache));
  p.q_nope = q_base, p.q_pe = q_base + s.latent;  // q: [rows, heads, latent | rope]
  p.ckv = kv_base, p.kpe = kv_base + s.latent;    // pages: [page, token, latent | rope]
  p.ckv_scale = p.kpe_scale = s.cache_scale;      // one cache, one scale
  p.q_indptr = at(info.q_indptr_offset);
  p.kv_indptr = at(info.kv_indptr_offset);
  p.partial_indptr = at(info.partial_indptr_offset);
  p.kv_indices = const_cast<int32_t*>(s.device_indices);
  p.q_len = at(info.q_len_offset);
  p.kv_len = at(info.kv_len_offset);
  p.q_start = at(info.q_start_offset);
  p.kv_start = at(info.kv_start_offset);
  p.kv_end = at(info.kv_end_offset);
  p.work_indptr = at(info.work_indptr_offset);
  p.merge_packed_offset_start = at(info.merge_packed_offset_start_offset);
  p.merge_packed_offset_end = at(info.merge_packed_offset_end_offset);
  p.merge_partial_packed_offset_start = at(info.merge_partial_packed_offset_start_offset);
  p.merge_partial_packed_offset_end = at(info.merge_partial_packed_offset_end_offset);
  p.merge_partial_stride = at(info.merge_partial_stride_offset);
  p.final_o = static_cast<T*>(o);
  p.final_lse = nullptr;
  p.partial_o = flashinfer::GetPtrFromBaseOffset<T>(ws.float_device, info.partial_o_offset);
  p.partial_lse = flashinfer::GetPtrFromBaseOffset<float>(ws.float_device, info.partial_lse_offset);
  p.num_heads = flashinfer::uint_fastdiv(static_cast<uint32_t>(s.heads));
  p.block_size = flashinfer::uint_fastdiv(static_cast<uint32_t>(s.page_size));
  p.q_nope_stride_n = p.q_pe_stride_n = static_cast<uint32_t>(s.q_stride_n);
  p.q_nope_stride_h = p.q_pe_stride_h = static_cast<uint32_t>(width);
  p.ckv_stride_page = p.kpe_stride_page = static_cast<uint32_t>(s.page_size * width);
  p.ckv_stride_n = p.kpe_stride_n = static_cast<uint32_t>(width);
  p.o_stride_n = static_cast<uint32_t>(s.o_stride_n);
  p.o_stride_h = static_cast<uint32_t>(s.latent);
  p.sm_scale = s.scale;
  p.return_lse_base_on_e = false;
  const auto blocks_x = static_cast<uint32_t>(info.num_blks_x);
  const auto blocks_y = static_cast<uint32_t>(info.num_blks_y);
  const cudaError_t status =
      s.causal ? flashinfer::mla::BatchMLAPageAttentionHopper<flashinfer::MaskMode::kCausal,
                                                              kLatent, kRope>(p, blocks_x,
                                                                              blocks_y, stream)
               : flashinfer::mla::BatchMLAPageAttentionHopper<flashinfer::MaskMode::kNone,
                                                              kLatent, kRope>(p, blocks_x,
                                                                              blocks_y, stream);
  check(status, "MLA");
}

}  // namespace

void run_mla(const MlaShape& s, const Workspace& ws, const std::vector<int64_t>& plan,
             const void* q, const void* cache, void* o, void* stream_ptr) {
  if (!mla_compiled(s.latent, s.rope))
    throw std::runtime_error("FlashInfer MLA: no kernel compiled for latent " +
                             std::to_string(s.latent) + " and rope " + std::to_string(s.rope));
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  if (s.fp8_cache)
    launch_mla<__nv_fp8_e4m3>(s, ws, plan, q, cache, o, stream);
  else
    launch_mla<__nv_bfloat16>(s, ws, plan, q, cache, o, stream);
}

}  // namespace attnbench::flashinfer_kernels
