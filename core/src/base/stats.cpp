#include "base/stats.hpp"

#include <boost/math/distributions/students_t.hpp>
#include <boost/math/statistics/univariate_statistics.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <tuple>

namespace attnbench {

namespace {

// Linear interpolation between order statistics (numpy's default), on sorted data.
double quantile_sorted(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// Two robust estimates of the standard deviation, the larger one: MAD alone is 0 whenever half the
// samples are equal (coarse clocks, few samples), the interquartile range alone misses a narrow
// core.
double relative_noise(std::vector<double> samples) {
  using boost::math::statistics::median;
  std::sort(samples.begin(), samples.end());
  const double center = quantile_sorted(samples, 0.5);
  if (center == 0) return 0;
  const double iqr_sigma =
      (quantile_sorted(samples, 0.75) - quantile_sorted(samples, 0.25)) / 1.349;
  // Not boost's median_absolute_deviation: in Boost 1.74 it ignores the center (returns median
  // |x|).
  for (double& x : samples) x = std::abs(x - center);
  const double mad_sigma = 1.4826 * median(samples);
  return std::max(mad_sigma, iqr_sigma) / std::abs(center);
}

}  // namespace

Summary summarize(std::vector<double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.count = static_cast<int>(samples.size());
  s.median = quantile_sorted(samples, 0.5);
  s.p10 = quantile_sorted(samples, 0.1);
  s.p90 = quantile_sorted(samples, 0.9);
  s.rel_spread = s.median != 0 ? (s.p90 - s.p10) / s.median : 0;
  s.rel_noise = relative_noise(samples);
  return s;
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

SampleRun sample_until_stable(const SamplingRule& settings,
                              const std::function<double()>& sample,
                              const std::function<double()>& now_s) {
  const double start = now_s();
  SampleRun run;
  size_t next_check = static_cast<size_t>(settings.min_samples);
  while (true) {
    run.samples.push_back(sample());
    run.elapsed_s = now_s() - start;
    const size_t n = run.samples.size();
    if (n >= static_cast<size_t>(settings.max_samples) || run.elapsed_s >= settings.max_time_s)
      break;
    if (n < static_cast<size_t>(settings.min_samples) || run.elapsed_s < settings.min_time_s)
      continue;
    if (n >= next_check) {
      // Checking costs a sort; do it after every ~10% more samples.
      next_check = n + std::max<size_t>(1, n / 10);
      const double noise = relative_noise(run.samples);
      if (noise <= settings.target_rel_noise) {
        run.converged = true;
        break;
      }
      if (1.2533 * noise / std::sqrt(static_cast<double>(n)) <=
          kMedianKnownShare * settings.target_rel_noise) {
        run.median_known = true;
        break;
      }
    }
  }
  if (!run.converged) run.converged = relative_noise(run.samples) <= settings.target_rel_noise;
  return run;
}

int calls_per_sample(double batch_sample_ms, double est_call_ms) {
  return static_cast<int>(
      std::clamp(std::ceil(batch_sample_ms / std::max(est_call_ms, 1e-3)), 1.0, 10000.0));
}

RatioInterval median_ratio_interval(const std::vector<double>& base,
                                    const std::vector<double>& candidate, uint64_t seed,
                                    int resamples) {
  if (base.empty() || candidate.empty()) return {};
  std::mt19937_64 rng(seed);
  std::vector<double> draw;
  auto resampled_median = [&](const std::vector<double>& from) {
    std::uniform_int_distribution<size_t> pick(0, from.size() - 1);
    draw.resize(from.size());
    for (auto& x : draw) x = from[pick(rng)];
    auto mid = draw.begin() + static_cast<std::ptrdiff_t>(draw.size() / 2);
    std::nth_element(draw.begin(), mid, draw.end());
    return *mid;
  };
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double b = resampled_median(base);
    const double c = resampled_median(candidate);
    if (b > 0) ratios.push_back(c / b);
  }
  if (ratios.empty()) return {};
  std::sort(ratios.begin(), ratios.end());
  auto at = [&](double q) {
    return ratios[std::min(ratios.size() - 1, static_cast<size_t>(q * (ratios.size() - 1) + 0.5))];
  };
  return {at(0.025), at(0.975)};
}

namespace {

struct LogMoments {
  double mean = 0, variance = 0;  // of the logs; variance 0 for one value
  double n = 0;
};

std::optional<LogMoments> log_moments(const std::vector<double>& values) {
  std::vector<double> logs;
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v)) return std::nullopt;
    logs.push_back(std::log(v));
  }
  if (logs.empty()) return std::nullopt;
  LogMoments m;
  m.n = static_cast<double>(logs.size());
  if (logs.size() == 1) {
    m.mean = logs.front();
  } else {
    std::tie(m.mean, m.variance) = boost::math::statistics::mean_and_sample_variance(logs);
  }
  return m;
}

}  // namespace

std::optional<RatioInterval> repetition_ratio_interval(const std::vector<double>& base,
                                                       const std::vector<double>& candidate,
                                                       double confidence) {
  const auto b = log_moments(base), c = log_moments(candidate);
  if (!b || !c || (b->n < 2 && c->n < 2)) return std::nullopt;
  double se2 = 0, df = 0;
  if (b->n >= 2 && c->n >= 2) {
    const double vb = b->variance / b->n, vc = c->variance / c->n;
    se2 = vb + vc;
    df = se2 > 0 ? se2 * se2 / (vb * vb / (b->n - 1) + vc * vc / (c->n - 1)) : b->n + c->n - 2;
  } else {
    const LogMoments& repeated = b->n >= 2 ? *b : *c;
    se2 = repeated.variance * (1 / b->n + 1 / c->n);
    df = repeated.n - 1;
  }
  const double t = boost::math::quantile(
      boost::math::complement(boost::math::students_t(df), (1 - confidence) / 2));
  const double d = c->mean - b->mean, half = t * std::sqrt(se2);
  return RatioInterval{std::exp(d - half), std::exp(d + half)};
}

}  // namespace attnbench
