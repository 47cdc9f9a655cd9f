// The power state's decisions on readings (measure/power_state.hpp): burst's gate on each sample's
// clock, and one call's energy between two ticks of a counter, driven here by readings the test
// makes up.
#include "measure/power_state.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>
#include <utility>

namespace attnbench {
namespace {

TEST(BurstGate, KeepsASampleAtTheMaximumAndDropsOneBelowIt) {
  BurstGate gate(1980, 30);
  EXPECT_EQ(gate.rest_after(1980), 0);
  EXPECT_EQ(gate.rest_after(1965), 0);  // within 3% of the maximum
  EXPECT_DOUBLE_EQ(gate.rest_after(1620), BurstGate::kFirstRestS);
  EXPECT_EQ(gate.dropped(), 1);
  EXPECT_EQ(gate.rest_after(1975), 0);  // rested: kept
  EXPECT_EQ(gate.dropped(), 1);
  EXPECT_DOUBLE_EQ(gate.rested_s(), BurstGate::kFirstRestS);
  EXPECT_FALSE(gate.gave_up());
}

// While samples keep coming in low the rests double, up to the longest, and stop once the pass
// has rested cooldown_max_s: the last rest is what is left of it, and samples are kept after.
TEST(BurstGate, RestsLongerWhileTheClockStaysLowThenGivesUp) {
  BurstGate gate(1980, 2.0);
  std::vector<double> rests;
  for (int i = 0; i < 20; ++i) {
    const double rest = gate.rest_after(1500);
    if (rest == 0) break;
    rests.push_back(rest);
  }
  ASSERT_EQ(rests.size(), 6u);  // 0.05 0.1 0.2 0.4 0.8, then 0.45 of the 2 s left
  EXPECT_DOUBLE_EQ(rests[1], 2 * rests[0]);
  EXPECT_LE(*std::max_element(rests.begin(), rests.end()), BurstGate::kLongestRestS);
  EXPECT_NEAR(gate.rested_s(), 2.0, 1e-12);
  EXPECT_TRUE(gate.gave_up());
  EXPECT_EQ(gate.dropped(), 6);
  EXPECT_EQ(gate.rest_after(1400), 0);  // given up: kept whatever the clock
  EXPECT_EQ(gate.highest_mhz(), 1500);
}

// A call that brings the clock down within itself never averages the maximum: the first sample
// still low after the longest rest is kept and sets the bar (not 30 s of rests, then any clock).
TEST(BurstGate, ASampleStillLowAfterTheLongestRestSetsTheBar) {
  BurstGate gate(1980, 30);
  int rests = 0;
  while (gate.rest_after(1800) > 0) ++rests;
  EXPECT_EQ(rests, 6);  // 0.05 0.1 0.2 0.4 0.8 1.0: the sample after the 1 s rest is kept
  ASSERT_TRUE(gate.rested_mhz());
  EXPECT_EQ(*gate.rested_mhz(), 1800);
  EXPECT_EQ(gate.rest_after(1790), 0);  // within 3% of the bar
  EXPECT_DOUBLE_EQ(gate.rest_after(1600), BurstGate::kLongestRestS);  // back to back: too low
  EXPECT_EQ(gate.rest_after(1610), 0);  // still, after the longest rest: the bar falls
  EXPECT_EQ(*gate.rested_mhz(), 1610);
  EXPECT_EQ(gate.dropped(), 7);
  EXPECT_FALSE(gate.gave_up());
}

TEST(BurstGate, NoCooldownKeepsEverySample) {
  BurstGate gate(1980, 0);
  EXPECT_EQ(gate.rest_after(1000), 0);
  EXPECT_TRUE(gate.gave_up());
  EXPECT_EQ(gate.dropped(), 0);
}

// A counter that ticks every `period_s`, reporting the energy a board of `idle_w` idle and
// `busy_w` while calls run used up to its last tick; calls take `call_s` each.
struct FakeBoard {
  double period_s = 0.1, idle_w = 100, busy_w = 600, call_s = 0.001;
  double now = 0.0137;  // not on a tick
  double energy_j = 0;  // exact, up to `now`
  double ticked_j = 0;  // as of the last tick
  double last_tick = 0;
  bool readable = true;

  void advance(double dt, double watts) {
    while (dt > 0) {
      const double next_tick = last_tick + period_s;
      const double step = std::min(dt, next_tick - now);
      now += step, dt -= step, energy_j += watts * step;
      if (now >= next_tick - 1e-15) last_tick = next_tick, ticked_j = energy_j;
    }
  }
  EnergyProbe probe() {
    EnergyProbe p;
    p.read_mj = [this]() -> std::optional<unsigned long long> {
      if (!readable) return std::nullopt;
      return static_cast<unsigned long long>(std::llround(ticked_j * 1000));
    };
    p.run_calls = [this](int calls) { advance(calls * call_s, busy_w); };
    p.now_s = [this] { return now; };
    p.sleep_s = [this](double s) { advance(s, idle_w); };
    return p;
  }
};

// Stamps of a stretch of `us` microseconds at `mhz`, on one SM.
std::pair<SmStamp, SmStamp> stretch(double us, double mhz, unsigned long long at_ns = 5'000'000) {
  const auto ns = static_cast<unsigned long long>(us * 1000);
  const auto cycles = static_cast<unsigned long long>(us * mhz);
  return {SmStamp{at_ns, 1'000'000}, SmStamp{at_ns + ns, 1'000'000 + cycles}};
}

TEST(MeanClock, IsCyclesOverNanosecondsTheMedianOverTheSmsReadAtBothEnds) {
  SmStamps stamps{std::vector<SmStamp>(6), std::vector<SmStamp>(6)};
  const double mhz[] = {1980, 1800, 1900};
  for (int sm = 0; sm < 3; ++sm)
    std::tie(stamps.open[sm], stamps.close[sm]) = stretch(2000, mhz[sm], 5'000'000 + sm * 40);
  stamps.open[3] = stretch(2000, 100).first;     // read at the start only
  stamps.close[4] = stretch(2000, 100).second;   // at the end only
  const std::optional<double> clock = mean_clock_mhz(stamps);
  ASSERT_TRUE(clock);
  EXPECT_NEAR(*clock, 1900, 1e-6);
}

TEST(MeanClock, NoneForAStretchShorterThanTheTimerResolvesOrNoSmReadTwice) {
  SmStamps stamps{std::vector<SmStamp>(2), std::vector<SmStamp>(2)};
  EXPECT_FALSE(mean_clock_mhz(stamps));
  std::tie(stamps.open[0], stamps.close[0]) = stretch(kShortestSpanUs / 2, 1980);
  EXPECT_FALSE(mean_clock_mhz(stamps));
  std::tie(stamps.open[1], stamps.close[1]) = stretch(kShortestSpanUs * 2, 1500);
  ASSERT_TRUE(mean_clock_mhz(stamps));
  EXPECT_NEAR(*mean_clock_mhz(stamps), 1500, 1e-6);  // the short one left out
  EXPECT_FALSE(mean_clock_mhz(SmStamps{}));
}

TEST(EnergyReading, IsTheBusyEnergyPerCallBetweenTwoTicks) {
  FakeBoard board;
  const auto r = read_energy(board.probe(), 2, 0.3);
  ASSERT_TRUE(r);
  // 600 W for 1 ms: 0.6 J a call; the tick inside the last batch costs at most half a batch.
  EXPECT_NEAR(r->joules_per_call, 0.6, 0.6 * 0.01);
  EXPECT_GE(r->window_s, 0.3);
  EXPECT_LE(r->window_s, 0.3 + board.period_s + 0.002);
}

TEST(EnergyReading, ACoarseCounterStillReadsThePerCallEnergy) {
  FakeBoard board;
  board.period_s = 0.25, board.call_s = 0.004, board.busy_w = 450;
  const auto r = read_energy(board.probe(), 1, 0.3);
  ASSERT_TRUE(r);
  EXPECT_NEAR(r->joules_per_call, 450 * 0.004, 450 * 0.004 * 0.02);
}

TEST(EnergyReading, NoneWithoutACounterOrATick) {
  FakeBoard unreadable;
  unreadable.readable = false;
  EXPECT_FALSE(read_energy(unreadable.probe(), 1, 0.3));
  FakeBoard frozen;
  frozen.period_s = 1e9;  // never ticks
  EXPECT_FALSE(read_energy(frozen.probe(), 1, 0.3));
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// A counter that goes backwards (the driver reloaded, the counter restarted near 0) between the
// window's opening tick and its closing one reads as no reading, never as a negative energy or an
// unsigned wrap-around: whether it went back at the closing tick itself or at a tick inside the
// window (the closing reading then above the one before it but below the opening one).
TEST(EnergyReading, ACounterThatGoesBackwardsIsNoReading) {
  // The window opens at the tick at 0.1 s and closes at the one at 0.4 s.
  for (const double reset_at : {0.12, 0.25, 0.4}) {
    FakeBoard board;
    board.energy_j = board.ticked_j = 5000;  // the counter's start, far from 0
    EnergyProbe probe = board.probe();
    const auto read = probe.read_mj;
    // From reset_at on the counter restarts: what it read, less the 5000 J it had then.
    probe.read_mj = [&board, read, reset_at]() -> std::optional<unsigned long long> {
      const auto mj = read();
      if (!mj || board.now < reset_at) return mj;
      return *mj - 4'999'000;  // still above 0: 1 J and what was used since
    };
    const auto r = read_energy(probe, 2, 0.3);
    EXPECT_FALSE(r) << "reset at " << reset_at << " s: " << r->joules_per_call << " J a call";
  }
  // The same board without the reset reads 0.6 J a call.
  FakeBoard board;
  board.energy_j = board.ticked_j = 5000;
  const auto r = read_energy(board.probe(), 2, 0.3);
  ASSERT_TRUE(r);
  EXPECT_NEAR(r->joules_per_call, 0.6, 0.6 * 0.01);
}

// A reset while the GPU idles, before the window opens, costs nothing: the window opens at the
// first tick after it and the reading is the calls' energy.
TEST(EnergyReading, ACounterResetBeforeTheWindowOpensIsHarmless) {
  FakeBoard board;
  board.energy_j = board.ticked_j = 5000;
  EnergyProbe probe = board.probe();
  const auto read = probe.read_mj;
  int reads = 0;
  probe.read_mj = [read, &reads]() -> std::optional<unsigned long long> {
    const auto mj = read();
    if (!mj || reads++ == 0) return mj;  // the idle reading before the reset
    return *mj - 4'999'000;
  };
  const auto r = read_energy(probe, 2, 0.3);
  ASSERT_TRUE(r);
  EXPECT_NEAR(r->joules_per_call, 0.6, 0.6 * 0.01);
}

}  // namespace
}  // namespace attnbench
