// Robust summaries of timing samples and the adaptive sampling loop that produces them.
#pragma once


#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace attnbench {

struct Summary {
  int count = 0;
  double median = 0;
  double p10 = 0;
  double p90 = 0;
  double rel_spread = 0;  // (p90 - p10) / median
  double rel_noise =
      0;  // max(1.4826 * MAD, IQR / 1.349) / median: a robust relative standard deviation
};

Summary summarize(std::vector<double> samples);

// When the sampling loop stops (the `measurement:` settings of those names).
struct SamplingRule {
  int min_samples = 10;
  int max_samples = 10000;
  double min_time_s = 0.05;
  double max_time_s = 1.0;
  double target_rel_noise = 0.01;
};

struct SampleRun {
  std::vector<double> samples;
  bool converged = false;  // reached target_rel_noise before a cap
  // Stopped before a cap with the spread above the target and the median already known to a
  // quarter of it (kMedianKnownShare): more samples would not narrow a spread that is the call's.
  bool median_known = false;
  double elapsed_s = 0;
};

// The median's relative standard error (1.2533 x spread / sqrt(n), spread as relative_noise
// measures it) at which a run whose spread stays above target_rel_noise stops: a quarter of the
// target. A 25 us kernel timed cold on an H100 spreads 2-3% whatever the count: it used to sample
// to max_time_s (0.25 s in the study's sweep, 700 samples) for a median known to 0.1% after 200.
inline constexpr double kMedianKnownShare = 0.25;

// Seconds on the steady clock; the sampler's default time source.
double steady_seconds();

// Calls `sample` (returning one measurement) until at least min_samples and min_time_s are done and
// the relative noise is at or below the target (converged), or the median is known to a quarter
// of the target though the spread stays above it (median_known), or until max_samples or
// max_time_s. Time is read
// from `now_s` (seconds), which tests replace with a clock they control.
SampleRun sample_until_stable(const SamplingRule& rule,
                              const std::function<double()>& sample,
                              const std::function<double()>& now_s = steady_seconds);

// 95% percentile-bootstrap interval of median(candidate) / median(base): both sample sets resampled
// with replacement `resamples` times by a generator seeded with `seed`, so the same inputs always
// give the same interval (as nvbench's robust compare does).
struct RatioInterval {
  double low = 1, high = 1;
};
RatioInterval median_ratio_interval(const std::vector<double>& base,
                                    const std::vector<double>& candidate, uint64_t seed,
                                    int resamples = 1000);

// Repetitions of one measurement (run --repetitions), each one observation of its side: the
// Student-t interval of the ratio of geometric means (means and variances of the logs, Welch's
// degrees of freedom), so it narrows as repetitions are added, unlike their range. When only one
// side was repeated, its spread stands for both. Nullopt when neither side has two values or a
// value is not positive.
std::optional<RatioInterval> repetition_ratio_interval(const std::vector<double>& base,
                                                       const std::vector<double>& candidate,
                                                       double confidence = 0.95);

// `batch` and `graph`: calls per sample so that one sample lasts about `batch_sample_ms` (1 to
// 10000).
int calls_per_sample(double batch_sample_ms, double est_call_ms);

}  // namespace attnbench
