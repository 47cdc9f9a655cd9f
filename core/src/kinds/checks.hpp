// What the float64 checks find, LibTorch-free (records/ judges rows by it): each variant's or
// kind's check and the bounds the judging uses. kinds/tensors.hpp computes them.
#pragma once

#include <algorithm>
#include <string>

namespace attnbench {

// A check of a variant the point has, or of its kind (each named by its file: kinds/variants/,
// kinds/), against the same attention without it, on the float64 check's rows: how far leaving it
// out moves the reference, and how far the backend's output is from each reference. An output
// nearer the reference without it than the one with it ignored it.
struct VariantCheck {
  std::string name;
  double moved = 0;        // worst row, reference without the variant against the reference
  double off_without = 0;  // worst row, the output against the reference without the variant
  double off_with = 0;     // worst row, the output against the reference
  bool own_call = false;   // checked on a call of its own, q drawn wider (its variant's spread)
  // The reference without it and the verdict, in words; empty: "attention without NAME" and
  // "NAME ignored".
  std::string what, verdict;
};

// A variant is checked at a point where leaving it out moves the reference this many tolerances:
// the two references are then told apart by any output within the tolerance of either.
inline constexpr double kVariantMovesTolerances = 4;

// The forward's whole-output check (every row against float32) is judged against this many times
// the tolerance, the drawn rows' float64 check against the tolerance itself: the worst of every
// row of a large output lies further out in bf16's rounding than the worst of the drawn rows (on
// the H100 at c0317e3, naive's bf16 forward at 4k-8k keys: worst drawn row 0.013-0.019, worst of
// 262k rows 0.029-0.034, tolerance 0.032). What the whole-output check is for (rows, heads or
// sequences left undone, a mask wrong in a region) is off by 0.1 to 1.
inline constexpr double kWholeOutputSlack = 2;

// The checks that the output follows changed inputs (moved before each timed sample, drawn afresh
// after the timed calls, a paged table scattered) ask whether it is computed from them at all: an
// output kept from earlier inputs is off by the order of 1, an honest one by its rounding on those
// inputs, which on a drawn row can pass the point's tolerance (naive at an MLA prefill over an fp8
// cache in bf16 read 0.0267 against 0.02 in 9 of 43 runs, those whose timing ended after 3
// samples). They are judged against this many times the tolerance.
inline constexpr double kFollowsSlack = 2;

// How far a backend's result is from float64 attention; NaN when it has a non-finite value.
struct ReferenceError {
  double rel_err = 0;  // forward: the float64 check's worst row, on the drawn rows
  std::string worst;   // which result: "out", "dq", "dk" or "dv"
  double whole_rel_err = 0;  // forward: the worst row of the whole output, against float32
  // One number to hold against the tolerance: the whole output's error counts at
  // 1 / kWholeOutputSlack of its size.
  double judged() const { return std::max(rel_err, whole_rel_err / kWholeOutputSlack); }
};

}  // namespace attnbench
