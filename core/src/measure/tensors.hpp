// The inputs the harness owns (created outside every timed region) and the float64 check of an
// output. Included only by translation units that use ATen.
#pragma once

#include <attnbench/backend.hpp>

#include <ATen/ATen.h>

#include <cstdint>

namespace attnbench {

at::ScalarType scalar_type(DType dtype);

struct InputTensors {
  at::Tensor q, k, v;
  at::Tensor causal_mask;  // undefined unless causal
  double scale = 1;

  Inputs view() const { return {q, k, v, causal_mask.defined() ? &causal_mask : nullptr, scale}; }
};

// Fresh standard-normal q, k, v from `seed` (never zeros: they hide unwritten outputs).
InputTensors make_inputs(const Problem& problem, uint64_t seed);

// Largest per-row relative error ||out - ref|| / ||ref|| of `out` against attention computed in
// float64 on a slice: the first and last batch entry and head, and up to 64 query rows spread over
// the sequence (rows are independent, so this stays cheap at any size). NaN if anything is not
// finite.
double max_row_rel_error(const InputTensors& inputs, const at::Tensor& out);

}  // namespace attnbench
