// The Hopper prefill kernel's parameters and its launch, one explicit instantiation per (head_dim,
// mask) in a translation unit of its own (prefill_instance.cu.in: each takes a minute or more to
// compile, so they build in parallel and only those listed in CMakeLists.txt exist).
#pragma once

#include <flashinfer/attention/hopper/default_params.cuh>

#include <cuda_runtime_api.h>
#include <cutlass/numeric_types.h>

namespace attnbench::flashinfer_kernels {

using PrefillParams = flashinfer::BatchPrefillRaggedParams<cutlass::bfloat16_t, cutlass::bfloat16_t,
                                                           cutlass::bfloat16_t, int32_t>;

template <int kHeadDim, bool kCausal, bool kWindow, bool kSoftcap>
cudaError_t launch_prefill(PrefillParams& params, cudaStream_t stream);

}  // namespace attnbench::flashinfer_kernels
