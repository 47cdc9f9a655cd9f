#include "base/stats.hpp"

#include <gtest/gtest.h>

#include <memory>

namespace attnbench {
namespace {

TEST(Stats, QuantilesAndRobustNoise) {
  const Summary s = summarize({5, 1, 4, 2, 3, 100});
  EXPECT_EQ(s.count, 6);
  EXPECT_DOUBLE_EQ(s.median, 3.5);
  EXPECT_DOUBLE_EQ(s.p10, 1.5);
  EXPECT_DOUBLE_EQ(s.p90, 52.5);
  EXPECT_DOUBLE_EQ(s.rel_spread, (52.5 - 1.5) / 3.5);
  // |x - 3.5| = 2.5 1.5 0.5 0.5 1.5 96.5 -> median 1.5: the outlier does not move it.
  EXPECT_NEAR(s.rel_noise, 1.4826 * 1.5 / 3.5, 1e-12);
}

TEST(Stats, ConstantSamplesHaveNoNoise) {
  const Summary s = summarize({2, 2, 2, 2});
  EXPECT_DOUBLE_EQ(s.median, 2);
  EXPECT_DOUBLE_EQ(s.rel_noise, 0);
  EXPECT_DOUBLE_EQ(s.rel_spread, 0);
}

TEST(Stats, StopsAtTheNoiseTargetAfterMinSamples) {
  SamplingRule m;
  m.min_samples = 7;
  m.max_samples = 1000;
  m.min_time_s = 0;
  m.max_time_s = 60;
  m.target_rel_noise = 0.01;
  int calls = 0;
  const SampleRun run = sample_until_stable(m, [&] { return ++calls, 1.0; });
  EXPECT_TRUE(run.converged);
  EXPECT_EQ(run.samples.size(), 7u);
}

TEST(Stats, StopsAtMaxSamplesWhenNoisy) {
  SamplingRule m;
  m.min_samples = 3;
  m.max_samples = 40;
  m.min_time_s = 0;
  m.max_time_s = 60;
  m.target_rel_noise = 0.001;
  int i = 0;
  const SampleRun run = sample_until_stable(m, [&] { return (i++ % 2) ? 1.0 : 2.0; });
  EXPECT_FALSE(run.converged);
  EXPECT_EQ(run.samples.size(), 40u);
}

// A sampling rule: at least and at most these samples and seconds, this noise target.
SamplingRule settings(int min_samples, int max_samples, double min_time_s, double max_time_s,
                         double target) {
  SamplingRule m;
  m.min_samples = min_samples, m.max_samples = max_samples;
  m.min_time_s = min_time_s, m.max_time_s = max_time_s;
  m.target_rel_noise = target;
  return m;
}

// Seven values 0.97 .. 1.03 in turn: a spread (relative_noise) of 1.4826 x 0.02 = 2.97% that no
// count of samples narrows.
double spread_of_three_percent(int& i) { return 0.97 + 0.01 * (i++ % 7); }

TEST(Stats, StopsOnceTheMedianIsKnownThoughTheSpreadStaysAboveTheTarget) {
  int i = 0;
  const SampleRun run = sample_until_stable(settings(5, 100000, 0, 1e9, 0.01),
                                            [&] { return spread_of_three_percent(i); });
  EXPECT_FALSE(run.converged);
  EXPECT_TRUE(run.median_known);
  // 1.2533 x 0.02965 / sqrt(n) <= 0.0025 from n = 222 on; checked every ~10% more samples.
  EXPECT_GE(run.samples.size(), 222u);
  EXPECT_LE(run.samples.size(), 245u);
}

TEST(Stats, AMedianNotYetKnownKeepsSampling) {
  SamplingRule m = settings(5, 221, 0, 1e9, 0.01);  // 221 samples: one short of knowing it
  int i = 0;
  const SampleRun run = sample_until_stable(m, [&] { return spread_of_three_percent(i); });
  EXPECT_FALSE(run.median_known);
  EXPECT_EQ(run.samples.size(), 221u);
  // A target the spread meets: converged, the median's rule never needed.
  m.max_samples = 100000;
  m.target_rel_noise = 0.03;
  i = 0;
  const SampleRun met = sample_until_stable(m, [&] { return spread_of_three_percent(i); });
  EXPECT_TRUE(met.converged);
  EXPECT_FALSE(met.median_known);
  EXPECT_LT(met.samples.size(), 20u);
}

// A clock that moves a fixed step every time it is read: the sampler reads it once at the start and
// once after each sample, so sample n ends at n * step seconds.
std::function<double()> ticking(double step) {
  auto t = std::make_shared<double>(0);
  return [t, step] {
    const double now = *t;
    *t += step;
    return now;
  };
}

TEST(Stats, KeepsSamplingUntilMinTimeEvenWhenQuiet) {
  const SampleRun run = sample_until_stable(
      settings(1, 1000, 1.0, 60, 0.01), [] { return 1.0; }, ticking(0.125));
  EXPECT_EQ(run.samples.size(), 8u);  // 8 x 0.125 s
  EXPECT_TRUE(run.converged);
  EXPECT_DOUBLE_EQ(run.elapsed_s, 1.0);
}

TEST(Stats, StopsAtMaxTimeWhenNoisy) {
  int i = 0;
  const SampleRun run = sample_until_stable(
      settings(2, 1000, 0, 1.0, 0.001), [&] { return (i++ % 2) ? 1.0 : 2.0; }, ticking(0.125));
  EXPECT_EQ(run.samples.size(), 8u);
  EXPECT_FALSE(run.converged);
}

TEST(Stats, MaxTimeWinsOverMinSamples) {
  const SampleRun run = sample_until_stable(
      settings(100, 1000, 0, 0.5, 0.01), [] { return 1.0; }, ticking(0.125));
  EXPECT_EQ(run.samples.size(), 4u);
}

TEST(Stats, MaxSamplesWinsOverMinTime) {
  const SampleRun run = sample_until_stable(
      settings(1, 5, 10, 60, 0.01), [] { return 1.0; }, ticking(0.125));
  EXPECT_EQ(run.samples.size(), 5u);
}

// Samples alternating 1.00 and 1.02 have a relative noise of 0.01 * 1.4826 / 1.01 = 1.468%.
TEST(Stats, TheNoiseTargetDecidesWhenToStop) {
  auto alternating = [] {
    auto i = std::make_shared<int>(0);
    return [i] { return ((*i)++ % 2) ? 1.02 : 1.0; };
  };
  EXPECT_NEAR(summarize({1.0, 1.02, 1.0, 1.02}).rel_noise, 0.01 * 1.4826 / 1.01, 1e-9);
  const SampleRun met =
      sample_until_stable(settings(10, 500, 0, 60, 0.015), alternating(), ticking(0.001));
  EXPECT_TRUE(met.converged);
  EXPECT_EQ(met.samples.size(), 10u);
  const SampleRun missed =
      sample_until_stable(settings(10, 500, 0, 60, 0.014), alternating(), ticking(0.001));
  EXPECT_FALSE(missed.converged);
  // Missed, and the median known to a quarter of the target from 1.2533 x 1.468% / sqrt(n) <=
  // 0.35%, n = 28 (a check: every sample to 20, then every second).
  EXPECT_TRUE(missed.median_known);
  EXPECT_EQ(missed.samples.size(), 28u);
  const SampleRun capped =
      sample_until_stable(settings(10, 27, 0, 60, 0.014), alternating(), ticking(0.001));
  EXPECT_FALSE(capped.converged);
  EXPECT_FALSE(capped.median_known);
  EXPECT_EQ(capped.samples.size(), 27u);
}

// Noisy at first, then quiet: with fewer than 10 samples the noise is checked after every sample,
// so sampling stops at the first sample where it is met (the ninth here), not later.
TEST(Stats, ChecksTheNoiseOftenEnoughToStopAsSoonAsItIsMet) {
  const std::vector<double> values = {1, 2, 1, 2};
  size_t i = 0;
  const SampleRun run = sample_until_stable(
      settings(5, 100, 0, 60, 0.01), [&] { return i < values.size() ? values[i++] : 1.0; },
      ticking(0.001));
  EXPECT_TRUE(run.converged);
  EXPECT_EQ(run.samples.size(), 9u);
}

// Past 20 samples the noise is checked after every ~10% more (20, 22, 24, 26, ...): quiet from the
// 25th sample on, this run stops at the 26th.
TEST(Stats, ChecksTheNoiseEveryTenPercentLater) {
  size_t i = 0;
  const SampleRun run = sample_until_stable(
      settings(5, 100, 0, 60, 0.01), [&] { return i++ < 12 ? (i % 2 ? 1.0 : 2.0) : 1.0; },
      ticking(0.001));
  EXPECT_TRUE(run.converged);
  EXPECT_EQ(run.samples.size(), 26u);
}

TEST(Stats, CallsPerSampleFillTheSampleTime) {
  EXPECT_EQ(calls_per_sample(2.0, 0.1), 20);
  EXPECT_EQ(calls_per_sample(2.0, 0.3), 7);           // rounded up
  EXPECT_EQ(calls_per_sample(2.0, 100), 1);           // at least one call
  EXPECT_EQ(calls_per_sample(2.0, 0), 2000);          // estimates under 1 us count as 1 us
  EXPECT_EQ(calls_per_sample(100000, 0.001), 10000);  // at most 10000
}

TEST(Stats, QuantilesInterpolateBetweenOrderStatistics) {
  const Summary s = summarize({10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110});
  EXPECT_DOUBLE_EQ(s.median, 60);
  EXPECT_DOUBLE_EQ(s.p10, 20);
  EXPECT_DOUBLE_EQ(s.p90, 100);
  const Summary two = summarize({1, 2});
  EXPECT_DOUBLE_EQ(two.median, 1.5);
  EXPECT_DOUBLE_EQ(two.p10, 1.1);
  EXPECT_DOUBLE_EQ(two.p90, 1.9);
  EXPECT_EQ(summarize({}).count, 0);
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// p10 and p90 on samples given out of order and spaced unevenly (so that interpolating between
// the wrong neighbours, or at the wrong position, shows): numpy's linear rule, position q (n - 1).
TEST(Stats, P10AndP90OfAnOddCount) {
  // sorted 1 2 4 8 16: p10 at 0.4 -> 1 + 0.4 (2 - 1); p90 at 3.6 -> 8 + 0.6 (16 - 8).
  const Summary s = summarize({16, 1, 8, 2, 4});
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.median, 4);
  EXPECT_NEAR(s.p10, 1.4, 1e-9);
  EXPECT_NEAR(s.p90, 12.8, 1e-9);
  EXPECT_NEAR(s.rel_spread, (12.8 - 1.4) / 4, 1e-9);
}

TEST(Stats, P10AndP90OfAnEvenCount) {
  // sorted 1 2 4 8 16 32: p10 at 0.5 -> 1.5; p90 at 4.5 -> 16 + 0.5 (32 - 16); median at 2.5 -> 6.
  const Summary s = summarize({32, 4, 1, 16, 2, 8});
  EXPECT_EQ(s.count, 6);
  EXPECT_DOUBLE_EQ(s.median, 6);
  EXPECT_NEAR(s.p10, 1.5, 1e-9);
  EXPECT_NEAR(s.p90, 24, 1e-9);
  EXPECT_NEAR(s.rel_spread, (24 - 1.5) / 6, 1e-9);
}

// Twenty samples: p90 at 17.1 between the 18th and 19th smallest, never the largest (an outlier
// a tenth of the samples may hold); p10 at 1.9, between the 2nd and 3rd.
TEST(Stats, P90LeavesTheSlowestTenthOut) {
  std::vector<double> samples;
  for (int i = 1; i <= 18; ++i) samples.push_back(i);
  samples.push_back(1000);  // the 19th
  samples.push_back(5000);  // the 20th
  const Summary s = summarize(samples);
  EXPECT_NEAR(s.p90, 18 + 0.1 * (1000 - 18), 1e-9);
  EXPECT_NEAR(s.p10, 2 + 0.9 * (3 - 2), 1e-9);
  EXPECT_DOUBLE_EQ(s.median, 10.5);
}

TEST(Stats, OneSampleIsEveryQuantile) {
  const Summary s = summarize({7});
  EXPECT_EQ(s.count, 1);
  EXPECT_NEAR(s.p10, 7, 1e-9);
  EXPECT_DOUBLE_EQ(s.median, 7);
  EXPECT_NEAR(s.p90, 7, 1e-9);
  EXPECT_NEAR(s.rel_spread, 0, 1e-9);
}

}  // namespace
}  // namespace attnbench
