// Whether the caller's current CUDA stream is being captured into a graph (the probe plugins
// behave differently then).
#pragma once

#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>

namespace attnbench::probe {

inline bool capturing() {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  return cudaStreamIsCapturing(at::cuda::getCurrentCUDAStream(), &status) == cudaSuccess &&
         status != cudaStreamCaptureStatusNone;
}

}  // namespace attnbench::probe
