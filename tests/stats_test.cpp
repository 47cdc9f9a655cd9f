#include "stats.hpp"

#include <gtest/gtest.h>

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
  MeasureSettings m;
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
  MeasureSettings m;
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

}  // namespace
}  // namespace attnbench
