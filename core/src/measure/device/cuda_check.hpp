// The one CUDA error check: every CUDA runtime call the harness makes goes through it.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace attnbench {

inline void cuda_check(cudaError_t result, const char* what) {
  if (result != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(result));
}

}  // namespace attnbench
