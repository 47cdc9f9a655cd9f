#include "measure/passes/passes.hpp"

#include <stdexcept>

#ifdef ATTNBENCH_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace attnbench {

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
