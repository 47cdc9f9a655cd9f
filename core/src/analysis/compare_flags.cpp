#include "analysis/compare_flags.hpp"

#include "base/names.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
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

std::string flags_of(const CsvTable& table, size_t row) {
  return table.column("flags") < 0 ? std::string() : table.at(row, "flags");
}

namespace {
// Host time is the host's as much as the backend's: when the two sides ran on cores at clearly
// different clocks, or were preempted inside calls, their host-time rows say so.
constexpr double kHostClockDiffers = 0.05;
constexpr double kPreemptedOften = 0.1;  // involuntary switches per call
}  // namespace

std::string host_flags(const CsvTable& base, size_t base_row, const CsvTable& candidate,
                       size_t candidate_row) {
  std::string out;
  const auto base_mhz = base.number(base_row, "host_mhz"),
             new_mhz = candidate.number(candidate_row, "host_mhz");
  if (base_mhz && new_mhz && *base_mhz > 0 &&
      std::abs(*new_mhz / *base_mhz - 1) > kHostClockDiffers)
    out = to_string(Flag::host_clock_differs);
  for (const auto& [t, r] : {std::pair{&base, base_row}, std::pair{&candidate, candidate_row}})
    if (t->number(r, "host_preempted_per_call").value_or(0) > kPreemptedOften)
      return merged_flags(out, to_string(Flag::host_preempted));
  return out;
}

}  // namespace attnbench
