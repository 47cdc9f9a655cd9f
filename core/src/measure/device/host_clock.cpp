#include "measure/device/host_clock.hpp"

#include <sched.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>

namespace attnbench {

std::optional<double> host_clock_mhz() {
#if defined(__x86_64__)
  constexpr uint64_t kIterations = 1 << 18;  // x 8 adds: 2^21 cycles, ~0.7 ms at 3 GHz
  uint64_t x = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < kIterations; ++i)
    // Eight dependent adds: the chain's latency, not the loop's bookkeeping, sets the pace.
    asm volatile(
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
        : "+r"(x));
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  return ns > 0 ? 8.0 * static_cast<double>(kIterations) / ns * 1e3 : std::optional<double>();
#else
  return std::nullopt;
#endif
}

long involuntary_switches() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_nivcsw;
}

int current_cpu() { return sched_getcpu(); }

}  // namespace attnbench
