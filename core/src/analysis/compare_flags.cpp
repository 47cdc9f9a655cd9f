#include "analysis/compare_flags.hpp"

#include "base/names.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace attnbench {

std::string merged_flags(const std::string& a, const std::string& b) {
  std::vector<std::string> seen;
  for (const std::string& text : {a, b})
    for (const std::string& flag : split(text, ';'))
      if (!flag.empty() && std::find(seen.begin(), seen.end(), flag) == seen.end())
        seen.push_back(flag);
  std::string out;
  for (const auto& f : seen) out += (out.empty() ? "" : ";") + f;
  return out;
}

namespace {
// Host time is the host's as much as the backend's: when the two sides ran on cores at clearly
// different clocks, or were preempted inside calls, their host-time rows say so.
constexpr double kHostClockDiffers = 0.05;
constexpr double kPreemptedOften = 0.1;  // involuntary switches per call
}  // namespace

std::string host_flags(const Row& base, const Row& candidate) {
  std::string out;
  if (base.host_mhz && candidate.host_mhz && *base.host_mhz > 0 &&
      std::abs(*candidate.host_mhz - *base.host_mhz) > kHostClockDiffers * *base.host_mhz)
    out = to_string(Flag::host_clock_differs);
  for (const Row* row : {&base, &candidate})
    if (row->host_preempted_per_call.value_or(0) > kPreemptedOften)
      return merged_flags(out, to_string(Flag::host_preempted));
  return out;
}

}  // namespace attnbench
