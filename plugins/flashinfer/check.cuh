// What prefill.cu and decode.cu share: a CUDA status turned into the exception kernels.hpp
// promises.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace attnbench::flashinfer_kernels {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("FlashInfer ") + what + ": " + cudaGetErrorString(status));
}

}  // namespace attnbench::flashinfer_kernels
