// The decode kernel's parameters, its plan and its launch, one explicit instantiation per
// (head_dim, window, softcap) in a translation unit of its own (decode_instance.cu.in: each holds
// every GQA group size, so they build in parallel and only those listed in CMakeLists.txt exist).
#pragma once

#include "kernels.hpp"

#include <flashinfer/attention/default_decode_params.cuh>
#include <flashinfer/attention/scheduler.cuh>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

namespace attnbench::flashinfer_kernels {

using DecodeParams = flashinfer::BatchDecodeParams<nv_bfloat16, nv_bfloat16, nv_bfloat16, int32_t>;

// DecodePlan for the instance's kernel (its split-KV scheduler sizes the work by the kernel's
// occupancy, so the plan belongs to the instance).
template <uint32_t kHeadDim, bool kWindow, bool kSoftcap>
cudaError_t plan_decode_instance(flashinfer::DecodePlanInfo& info, const Workspace& ws,
                                 int32_t* indptr, uint32_t batch, uint32_t heads,
                                 uint32_t group_size, uint32_t page_size, cudaStream_t stream);

template <uint32_t kHeadDim, bool kWindow, bool kSoftcap>
cudaError_t launch_decode(DecodeParams& params, nv_bfloat16* tmp_v, float* tmp_s,
                          cudaStream_t stream);

}  // namespace attnbench::flashinfer_kernels
