#include "host_info.hpp"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <torch/version.h>

#ifdef ATTNBENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

#include <stdexcept>

namespace attnbench {

HostInfo query_host() {
  HostInfo info;
  info.torch_version = TORCH_VERSION;
  info.device_name = "cpu";
#ifdef ATTNBENCH_WITH_CUDA
  info.cuda_available = at::globalContext().hasCUDA() && at::detail::getCUDAHooks().getNumGPUs() > 0;
  if (info.cuda_available) {
    if (cudaGetDevice(&info.cuda_device) != cudaSuccess) info.cuda_device = 0;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, info.cuda_device) != cudaSuccess)
      throw std::runtime_error("cudaGetDeviceProperties failed");
    info.device_name = prop.name;
    info.l2_cache_bytes = prop.l2CacheSize;
  }
#endif
  return info;
}

void check_cuda(const char* what) {
#ifdef ATTNBENCH_WITH_CUDA
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
#else
  (void)what;
#endif
}

void synchronize_device(const HostInfo& host) {
#ifdef ATTNBENCH_WITH_CUDA
  if (!host.cuda_available) return;
  const cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) throw std::runtime_error(std::string("cudaDeviceSynchronize: ") + cudaGetErrorString(err));
#else
  (void)host;
#endif
}

}  // namespace attnbench
