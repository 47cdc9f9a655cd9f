#include "measure/passes/passes.hpp"

#include "base/stats.hpp"
#include "measure/device/device_monitor.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace attnbench {

std::optional<EnergyReading> energy_pass(PassContext& ctx, double est_call_ms) {
  if (!ctx.monitor) return std::nullopt;
  const bool forward = ctx.problem.direction == Direction::fwd;
  EnergyProbe probe;
  probe.read_mj = [&] { return ctx.monitor->energy_mj(); };
  probe.run_calls = [&](int calls) {
    if (forward) ctx.move_inputs();  // as in the timing pass: no call sees values twice
    for (int i = 0; i < calls; ++i) ctx.call();
    synchronize_device(ctx.host);
  };
  probe.now_s = steady_seconds;
  probe.sleep_s = [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };
  // Batches of ~2 ms keep the tick's place inside one within 1% of a window of 0.3 s or more; a
  // long call gets a window of 20 of them.
  const double window_s = std::clamp(20 * est_call_ms / 1000, 0.3, 3.0);
  return read_energy(probe, calls_per_sample(2.0, est_call_ms), window_s);
}

}  // namespace attnbench
