#include "measure/passes/passes.hpp"

#include "measure/device/device_monitor.hpp"

#include <stdexcept>

#ifdef ATTNBENCH_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace attnbench {

// The device's free memory now (cudaMemGetInfo: what every allocator, PyTorch's or not, left);
// none while another process has the GPU (ctest -j4, a neighbour's job): what it takes or gives
// back would be charged to the backend measured here.
std::optional<double> device_free_mib(const HostInfo& host, const DeviceMonitor* monitor) noexcept {
#ifdef ATTNBENCH_WITH_CUDA
  size_t free = 0, total = 0;
  if (!host.cuda_available || cudaMemGetInfo(&free, &total) != cudaSuccess) return std::nullopt;
  if (monitor && monitor->shared_with_another_process()) return std::nullopt;
  return static_cast<double>(free) / (1024.0 * 1024.0);
#else
  (void)host, (void)monitor;
  return std::nullopt;
#endif
}

std::optional<double> unheld_device_mib(const HostInfo& host,
                                        const DeviceMonitor* monitor) noexcept {
#ifdef ATTNBENCH_WITH_CUDA
  try {
    if (!host.cuda_available) return std::nullopt;
    synchronize_device(host);  // the last call's allocations made
    const std::optional<double> free = device_free_mib(host, monitor);
    if (!free) return std::nullopt;
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(
        static_cast<c10::DeviceIndex>(host.cuda_device));
    constexpr auto kAll = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    const int64_t cached = stats.reserved_bytes[kAll].current - stats.allocated_bytes[kAll].current;
    return *free + static_cast<double>(cached) / (1024.0 * 1024.0);
  } catch (...) {
    return std::nullopt;
  }
#else
  (void)host, (void)monitor;
  return std::nullopt;
#endif
}


MemoryResult memory_pass(PassContext& ctx) {
#ifdef ATTNBENCH_WITH_CUDA
  using c10::CachingAllocator::StatType;
  namespace allocator = c10::cuda::CUDACachingAllocator;
  const auto aggregate = static_cast<size_t>(StatType::AGGREGATE);
  synchronize_device(ctx.host);
  ctx.release_result();
  const auto device = static_cast<c10::DeviceIndex>(ctx.host.cuda_device);
  const int64_t before = allocator::getDeviceStats(device).allocated_bytes[aggregate].current;
  allocator::resetPeakStats(device);
  ctx.call();
  synchronize_device(ctx.host);
  const int64_t peak = allocator::getDeviceStats(device).allocated_bytes[aggregate].peak;
  return {static_cast<double>(std::max<int64_t>(0, peak - before - ctx.result_bytes())) /
          (1 << 20)};
#else
  (void)ctx;
  throw std::logic_error("the memory pass needs a CUDA build");
#endif
}

}  // namespace attnbench
