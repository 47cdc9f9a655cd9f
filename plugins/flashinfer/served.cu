// The served path: FlashInfer's batch prefill kernel over a paged cache (its FA2-generation
// tensor-core kernel: what its paged prefill wrapper runs for 2-8 queries a sequence and its decode
// wrapper with use_tensor_cores), scheduled by PrefillPlan, with attnbench's variant
// (served_variant.cuh) for windows, sinks and an fp8_e4m3 cache.
#include "check.cuh"
#include "kernels.hpp"
#include "paged_kv.cuh"
#include "served.cuh"

#include <stdexcept>
#include <string>

namespace attnbench::flashinfer_kernels {
// The instances CMakeLists.txt generated, as ATTNBENCH_FLASHINFER_SERVED(head_dim, window, sinks,
// fp8, tile) lines: every query tile FlashInfer's scheduler picks for the head_dim (16, 64, and
// 128 below head_dim 256).
#define ATTNBENCH_FLASHINFER_SERVED_INSTANCES "flashinfer_served_instances.inc"

namespace {

constexpr int64_t instance(int64_t head_dim, bool window, bool sinks, bool fp8, int64_t tile) {
  return ((((head_dim * 2 + window) * 2 + sinks) * 2 + fp8) << 8) + tile;
}

int64_t instance(const Shape& s, int64_t tile) {
  return instance(s.head_dim, s.window_left >= 0, s.sinks, s.fp8_cache, tile);
}

std::string variant_name(const Shape& s) {
  return "head_dim " + std::to_string(s.head_dim) + (s.window_left >= 0 ? ", a window" : "") +
         (s.sinks ? ", sinks" : "") + (s.fp8_cache ? ", an fp8_e4m3 cache" : ", a bf16 cache");
}

template <bool kFp8>
ServedParams<kFp8> params_for(const Shape& s, const PagedCache& c, const Workspace& ws,
                              const flashinfer::PrefillPlanInfo& info, const void* q,
                              const void* k, const void* v, const float* sinks, void* o) {
  using flashinfer::GetPtrFromBaseOffset;
  ServedParams<kFp8> p;
  p.q = static_cast<nv_bfloat16*>(const_cast<void*>(q));
  p.paged_kv = paged_kv<CacheType<kFp8>>(s, c, k, v);
  p.q_indptr = const_cast<int32_t*>(c.device_qo_indptr);
  p.o = static_cast<nv_bfloat16*>(o);
  p.lse = nullptr;
  p.num_qo_heads = static_cast<uint32_t>(s.heads);
  p.group_size = flashinfer::uint_fastdiv(static_cast<uint32_t>(s.heads / s.kv_heads));
  p.q_stride_n = static_cast<int32_t>(s.heads * s.head_dim);  // packed rows [total_q, heads, dim]
  p.q_stride_h = static_cast<int32_t>(s.head_dim);
  p.window_left = static_cast<int32_t>(s.window_left);
  p.logits_soft_cap = 0.f;
  p.sm_scale = s.scale;  // k's scale folded in by the caller
  p.rope_rcp_scale = p.rope_rcp_theta = 1.f;
  p.request_indices = GetPtrFromBaseOffset<int32_t>(ws.int_device, info.request_indices_offset);
  p.qo_tile_indices = GetPtrFromBaseOffset<int32_t>(ws.int_device, info.qo_tile_indices_offset);
  p.kv_tile_indices = GetPtrFromBaseOffset<int32_t>(ws.int_device, info.kv_tile_indices_offset);
  p.o_indptr = GetPtrFromBaseOffset<int32_t>(ws.int_device, info.o_indptr_offset);
  p.kv_chunk_size_ptr =
      GetPtrFromBaseOffset<int32_t>(ws.int_device, info.kv_chunk_size_ptr_offset);
  if (info.split_kv)
    p.merge_indptr = GetPtrFromBaseOffset<int32_t>(ws.int_device, info.merge_indptr_offset);
  p.padded_batch_size = static_cast<uint32_t>(info.padded_batch_size);
  p.max_total_num_rows = static_cast<uint32_t>(info.total_num_rows);
  p.partition_kv = info.split_kv;
  p.sinks = sinks;
  p.v_scale = s.v_scale;
  return p;
}

}  // namespace

bool served_compiled(int64_t head_dim, bool window, bool sinks, bool fp8) {
  // An instance is compiled with all its tiles; tile 16 stands for them.
  switch (instance(head_dim, window, sinks, fp8, 16)) {
#define ATTNBENCH_FLASHINFER_SERVED(D, W, S, F, T) \
  case instance(D, W, S, F, T):                    \
    return true;
#include ATTNBENCH_FLASHINFER_SERVED_INSTANCES
#undef ATTNBENCH_FLASHINFER_SERVED
    default: return false;
  }
}

std::vector<int64_t> plan_served(const Shape& s, const PagedCache& c, const Workspace& ws,
                                 void* stream_ptr) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  std::vector<int32_t> qo_indptr = s.qo_indptr, page_indptr = c.indptr;
  flashinfer::PrefillPlanInfo info;
  check(flashinfer::PrefillPlan<int32_t>(
            ws.float_device, ws.float_bytes, ws.int_device, ws.int_host, ws.int_bytes, info,
            qo_indptr.data(), page_indptr.data(), static_cast<uint32_t>(qo_indptr.back()),
            static_cast<uint32_t>(s.batch), static_cast<uint32_t>(s.heads),
            static_cast<uint32_t>(s.kv_heads), static_cast<uint32_t>(s.head_dim),
            static_cast<uint32_t>(s.head_dim), static_cast<uint32_t>(c.page_size),
            /*enable_cuda_graph=*/false, /*sizeof_dtype_o=*/2, static_cast<int32_t>(s.window_left),
            /*fixed_split_size=*/-1, /*disable_split_kv=*/false, /*num_colocated_ctas=*/0,
            /*uniform_q_len=*/0, stream, /*kv_dtype_bytes=*/s.fp8_cache ? 1 : 2),
        "PrefillPlan");
  check(cudaStreamSynchronize(stream), "plan copy");
  return info.ToVector();
}

void run_served(const Shape& s, const PagedCache& c, const Workspace& ws,
                const std::vector<int64_t>& plan, const void* q, const void* k, const void* v,
                const float* sinks, void* o, void* stream_ptr) {
  flashinfer::PrefillPlanInfo info;
  info.FromVector(plan);
  nv_bfloat16* tmp_v = nullptr;
  float* tmp_s = nullptr;
  if (info.split_kv) {
    tmp_v = flashinfer::GetPtrFromBaseOffset<nv_bfloat16>(ws.float_device, info.v_offset);
    tmp_s = flashinfer::GetPtrFromBaseOffset<float>(ws.float_device, info.s_offset);
  }
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  cudaError_t status = cudaErrorNotSupported;
  switch (instance(s, info.cta_tile_q)) {
#define ATTNBENCH_FLASHINFER_SERVED(D, W, S, F, T)                                        \
  case instance(D, W, S, F, T): {                                                         \
    auto p = params_for<F>(s, c, ws, info, q, k, v, sinks, o);                            \
    status = launch_served<D, W, S, F, T>(p, tmp_v, tmp_s, stream);                       \
    break;                                                                                \
  }
#include ATTNBENCH_FLASHINFER_SERVED_INSTANCES
#undef ATTNBENCH_FLASHINFER_SERVED
    default:
      throw std::runtime_error("FlashInfer batch prefill: no kernel compiled for " +
                               variant_name(s) + " and a query tile of " +
                               std::to_string(info.cta_tile_q) + " rows");
  }
  check(status, "batch prefill (paged)");
}

}  // namespace attnbench::flashinfer_kernels
