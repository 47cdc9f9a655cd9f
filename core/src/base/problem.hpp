// Facts about a problem that every stage shares: its id and its useful work.
#pragma once

#include <attnbench/backend.hpp>

#include <string>

namespace attnbench {

// Stable identifier of a problem, shared by the main and the kernel CSV:
// "b4-h16-s2048-d64-bf16-causal-cuda".
std::string point_id(const Problem& problem);

// Floating-point operations of the attention itself (two matrix products); with a causal mask only
// the unmasked half counts, so backends that skip masked blocks and those that do not are compared
// on the same useful work.
double attention_flop(const Problem& problem);

}  // namespace attnbench
