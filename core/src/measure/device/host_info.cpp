#include "measure/device/host_info.hpp"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <torch/version.h>

#ifdef ATTNBENCH_WITH_CUDA
#include "measure/device/cuda_check.hpp"
#endif

#include <stdexcept>

namespace attnbench {

HostInfo query_host() {
  HostInfo info;
  info.torch_version = TORCH_VERSION;
  info.device_name = "cpu";
#ifdef ATTNBENCH_WITH_CUDA
  info.cuda_available =
      at::globalContext().hasCUDA() && at::detail::getCUDAHooks().getNumGPUs() > 0;
  if (info.cuda_available) {
    info.cuda_device_count = at::detail::getCUDAHooks().getNumGPUs();
    cuda_check(cudaGetDevice(&info.cuda_device), "cudaGetDevice");
    cudaDeviceProp prop{};
    cuda_check(cudaGetDeviceProperties(&prop, info.cuda_device), "cudaGetDeviceProperties");
    info.device_name = prop.name;
    info.l2_cache_bytes = prop.l2CacheSize;
  }
#endif
  return info;
}

void synchronize_device(const HostInfo& host) {
#ifdef ATTNBENCH_WITH_CUDA
  if (!host.cuda_available) return;
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
#else
  (void)host;
#endif
}

std::optional<std::string> sticky_cuda_error(const HostInfo& host) {
#ifdef ATTNBENCH_WITH_CUDA
  if (!host.cuda_available) return std::nullopt;
  // A sticky error is returned by every call from now on, a synchronize included; any other error
  // left from a failed launch is cleared so that it is not blamed on the next backend.
  const cudaError_t err = cudaDeviceSynchronize();
  if (err == cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;
  }
  return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
#else
  (void)host;
  return std::nullopt;
#endif
}

}  // namespace attnbench
