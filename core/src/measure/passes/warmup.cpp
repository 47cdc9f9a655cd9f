#include "measure/passes/passes.hpp"

#include "base/stats.hpp"

#include <chrono>

namespace attnbench {

WarmupResult warmup_pass(PassContext& ctx) {
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  std::vector<double> per_call;
  const auto start = Clock::now();
  do {
    const auto t = Clock::now();
    ctx.call();
    synchronize_device(ctx.host);
    per_call.push_back(ms_since(t));
  } while (ms_since(start) < ctx.settings.warmup_ms && per_call.size() < 100000);
  return {static_cast<int>(per_call.size()), summarize(per_call).median};
}

}  // namespace attnbench
