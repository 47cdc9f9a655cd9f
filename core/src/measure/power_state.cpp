#include "measure/power_state.hpp"

#include "measure/pass_results.hpp"

#include <algorithm>
#include <utility>

namespace attnbench {

BurstGate::BurstGate(double reference_mhz, double cooldown_max_s)
    : reference_mhz_(reference_mhz), cooldown_max_s_(cooldown_max_s) {}

double BurstGate::rest_after(double sample_clock_mhz) {
  highest_mhz_ = std::max(highest_mhz_, sample_clock_mhz);
  const double rested_before = std::exchange(last_rest_s_, 0);
  const double bar = rested_mhz_.value_or(reference_mhz_);
  if (gave_up_ || sample_clock_mhz >= bar * (1 - kClockDropFlag)) return 0;
  if (rested_before >= kLongestRestS) {
    rested_mhz_ = sample_clock_mhz;
    return 0;
  }
  if (rested_s_ >= cooldown_max_s_) {
    gave_up_ = true;
    return 0;
  }
  const double rest = std::min(next_rest_s_, cooldown_max_s_ - rested_s_);
  rested_s_ += rest;
  last_rest_s_ = rest;
  ++dropped_;
  next_rest_s_ = std::min(next_rest_s_ * 2, kLongestRestS);
  return rest;
}

std::optional<double> mean_clock_mhz(const SmStamps& stamps) {
  std::vector<double> mhz;
  for (size_t sm = 0; sm < std::min(stamps.open.size(), stamps.close.size()); ++sm) {
    const SmStamp& open = stamps.open[sm];
    const SmStamp& close = stamps.close[sm];
    if (open.timer_ns == 0 || close.timer_ns < open.timer_ns + kShortestSpanUs * 1000 ||
        close.cycles < open.cycles)
      continue;
    mhz.push_back(static_cast<double>(close.cycles - open.cycles) /
                  static_cast<double>(close.timer_ns - open.timer_ns) * 1000);
  }
  if (mhz.empty()) return std::nullopt;
  std::nth_element(mhz.begin(), mhz.begin() + mhz.size() / 2, mhz.end());
  return mhz[mhz.size() / 2];
}

std::optional<EnergyReading> read_energy(const EnergyProbe& probe, int calls_per_batch,
                                         double window_s) {
  constexpr double kTickWaitS = 3;  // a counter that does not tick this long is not one to use
  constexpr double kPollS = 0.0005;
  const auto idle = probe.read_mj();
  if (!idle) return std::nullopt;
  const double waited = probe.now_s();
  unsigned long long open_mj = *idle;
  while (open_mj == *idle) {
    if (probe.now_s() - waited > kTickWaitS) return std::nullopt;
    probe.sleep_s(kPollS);
    const auto now = probe.read_mj();
    if (!now) return std::nullopt;
    open_mj = *now;
  }
  const double opened = probe.now_s();
  unsigned long long last_mj = open_mj;
  double calls = 0;
  while (true) {
    probe.run_calls(calls_per_batch);
    const auto now = probe.read_mj();
    if (!now) return std::nullopt;
    const double elapsed = probe.now_s() - opened;
    if (*now != last_mj && elapsed >= window_s) {
      calls += calls_per_batch / 2.0;
      // A counter that went backwards (a driver reload) reads as no reading.
      if (*now < open_mj) return std::nullopt;
      return EnergyReading{static_cast<double>(*now - open_mj) / 1000.0 / calls, elapsed, calls};
    }
    last_mj = *now;
    calls += calls_per_batch;
    if (elapsed > window_s + kTickWaitS) return std::nullopt;
  }
}

}  // namespace attnbench
