// What the harness learns about the machine once, at start.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace attnbench {

struct HostInfo {
  bool cuda_available = false;
  int cuda_device = 0;
  int cuda_device_count = 0;  // the GPUs this process sees (CUDA_VISIBLE_DEVICES applied)
  std::string device_name;    // the GPU's name, or "cpu"
  std::string torch_version;
  int64_t l2_cache_bytes = 0;
};

HostInfo query_host();

void synchronize_device(const HostInfo& host);

// An error the CUDA context cannot recover from (an illegal address, a device-side assert): after
// one, every later CUDA call fails, so the process that holds the context must end. nullopt: none.
std::optional<std::string> sticky_cuda_error(const HostInfo& host);

}  // namespace attnbench
