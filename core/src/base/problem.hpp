// Facts about a problem that every stage shares: its id and its useful work.
#pragma once

#include <attnbench/backend.hpp>

#include <string>

namespace attnbench {

// Stable identifier of a problem, shared by the main and the kernel CSV:
// "b4-h16-s2048-d64-bf16-causal-cuda". kv_heads, seq_len_kv and the direction appear only when
// they are not their defaults: "b1-h32-kv8-s1-skv131072-d128-bf16-full-cuda",
// "b8-h16-s2048-d64-bf16-causal-cuda-bwd".
std::string point_id(const Problem& problem);

// (query, key) pairs that take part in the softmax: seq_len x seq_len_kv, or with a causal mask
// (aligned bottom-right) only the unmasked ones.
double attended_pairs(const Problem& problem);

// Floating-point operations of the attention itself, FlashAttention's benchmark convention: two
// matrix products over the attended pairs forward (so backends that skip masked blocks and those
// that do not are compared on the same useful work), 2.5x that for the backward pass (five
// products instead of two).
double attention_flop(const Problem& problem);

}  // namespace attnbench
