// Helpers shared by the GPU tests: the host they run on, and the skip where it has no GPU.
#pragma once

#include "measure/device/host_info.hpp"

#include <gtest/gtest.h>

namespace attnbench::test {

inline const HostInfo& host() {
  static const HostInfo h = query_host();
  return h;
}

}  // namespace attnbench::test

#define REQUIRE_CUDA()                                         \
  if (!::attnbench::test::host().cuda_available)               \
    GTEST_SKIP() << "skipped: no CUDA device on this machine"; \
  static_assert(true)
