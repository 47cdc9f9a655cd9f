#include "measure/device/host_clock.hpp"

#include <sched.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>

namespace attnbench {

std::optional<double> host_clock_mhz() {
#if defined(__x86_64__)
  // A chain of dependent 64-bit multiplies: 3 cycles each on every x86-64 core since 2011, and,
  // unlike `add reg, imm`, never folded at rename (an add chain read 5-11 GHz on the H200's host).
  constexpr uint64_t kIterations = 1 << 17;  // x 4 multiplies x 3 cycles: ~1.6M cycles, ~0.5 ms
  constexpr double kCyclesPerIteration = 4 * 3;
  uint64_t x = 3;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < kIterations; ++i)
    asm volatile("imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0" : "+r"(x));
  const double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  return ns > 0 ? kCyclesPerIteration * static_cast<double>(kIterations) / ns * 1e3
                : std::optional<double>();
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
