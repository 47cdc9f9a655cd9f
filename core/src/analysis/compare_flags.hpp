// The flags a compared row carries: both rows' own (clock_throttled, noise_target_missed, ...)
// and, for host time, whether the two sides' hosts differed.
#pragma once

#include "records/row.hpp"

#include <string>

namespace attnbench {

// Each flag of either ';'-separated text once, in the order met.
std::string merged_flags(const std::string& a, const std::string& b);


// `host_clock_differs` when the two rows' worker cores ran at clocks more than 5% apart,
// `host_preempted` when either was preempted more than 0.1 times per call.
std::string host_flags(const Row& base, const Row& candidate);

}  // namespace attnbench
