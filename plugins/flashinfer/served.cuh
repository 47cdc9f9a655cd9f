// The served path's parameters and launch (served.cu plans and dispatches): FlashInfer's batch
// prefill kernel over a paged cache with attnbench's variant, one explicit instantiation per
// (head_dim, window, sinks, cache dtype, query tile) in a translation unit of its own
// (served_instance.cu.in; CMakeLists.txt lists them).
#pragma once

#include "served_variant.cuh"

#include <flashinfer/attention/default_prefill_params.cuh>
#include <flashinfer/attention/scheduler.cuh>

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <type_traits>

namespace attnbench::flashinfer_kernels {

template <bool kFp8>
using CacheType = std::conditional_t<kFp8, __nv_fp8_e4m3, nv_bfloat16>;

// FlashInfer's paged prefill parameters and what the variant reads beyond them.
template <bool kFp8>
struct ServedParams
    : flashinfer::BatchPrefillPagedParams<nv_bfloat16, CacheType<kFp8>, nv_bfloat16, int32_t> {
  const float* sinks = nullptr;  // [heads], the variant's kSinks only
  float v_scale = 1.f;
};

template <uint32_t kHeadDim, bool kWindow, bool kSinks, bool kFp8, uint32_t kTile>
cudaError_t launch_served(ServedParams<kFp8>& params, nv_bfloat16* tmp_v, float* tmp_s,
                          cudaStream_t stream);

}  // namespace attnbench::flashinfer_kernels
