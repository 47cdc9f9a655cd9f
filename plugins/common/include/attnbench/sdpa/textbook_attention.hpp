// The textbook causal attention of the study, shared by the naive and inplace plugins:
// matmul, scale, masked_fill, softmax, matmul. Out of place, masked_fill first copies the scores
// (a hidden memcpy on the GPU); in place, masked_fill_ writes into them.
#pragma once

#include <attnbench/backend.hpp>

#include <ATen/ATen.h>

#include <limits>

namespace attnbench {

inline at::Tensor textbook_attention(const Inputs& in, bool mask_in_place) {
  at::Tensor scores = at::matmul(in.q, in.k.transpose(-2, -1));
  scores = scores * in.scale;
  if (in.causal_mask) {
    constexpr double kMasked = -std::numeric_limits<double>::infinity();
    if (mask_in_place)
      scores.masked_fill_(*in.causal_mask, kMasked);
    else
      scores = scores.masked_fill(*in.causal_mask, kMasked);
  }
  return at::matmul(at::softmax(scores, -1), in.v);
}

}  // namespace attnbench
