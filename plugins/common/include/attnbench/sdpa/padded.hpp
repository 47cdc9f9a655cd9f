// A packed batch (ragged lengths, backend.hpp) fed to attention that only takes the uniform layout:
// each sequence padded to the longest, with a [batch, 1, seq_len, seq_len_kv] mask that hides the
// padding (and applies the causal mask and the window per sequence), then unpadded. The pad and
// unpad copies run inside the call, so they are timed: a row fed this way says so in its `feed`.
#pragma once

#include <attnbench/backend.hpp>

#include <ATen/ATen.h>

#include <functional>
#include <string>

namespace attnbench::sdpa {

inline const char* kPaddedFeed =
    "padded to the longest sequence with a mask (the pad and unpad copies are timed)";

// Runs `dense` on the padded inputs (their problem uniform, their mask 4-d; true = masked out)
// and returns its output in the packed layout. A contiguous cache only: paged is refused.
at::Tensor padded_attention(const Inputs& packed,
                            const std::function<at::Tensor(const Inputs&)>& dense);

}  // namespace attnbench::sdpa
