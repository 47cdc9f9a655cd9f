// The inputs the harness owns (created outside every timed region) and the float64 checks of what
// a backend returns. Included only by translation units that use ATen.
#pragma once

#include "measure/pass_results.hpp"

#include <attnbench/backend.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attnbench {

at::ScalarType scalar_type(DType dtype);

struct InputTensors {
  Problem problem;
  at::Tensor q, k, v;  // in the problem's layout (backend.hpp): uniform, packed or paged
  at::Tensor mask;     // uniform: [seq_len, seq_len_kv], causal and window; undefined: none
  at::Tensor grad_out;  // like q; undefined unless the problem is bwd
  // Packed layout: int32 on q's device (backend.hpp's Inputs), and host copies of the offsets.
  at::Tensor cu_seqlens_q, cu_seqlens_kv, kv_lens, page_table;
  at::Tensor sinks;  // Problem::sinks: float32 [heads] on q's device
  double scale = 1;
  double q_scale = 1, k_scale = 1, v_scale = 1;  // fp8: value = fp8 number * scale
  uint64_t seed = 0;  // what the values were drawn from; the float64 check draws its positions too

  Inputs view() const {
    auto opt = [](const at::Tensor& t) { return t.defined() ? &t : nullptr; };
    return {problem,  q,       k,       v,        opt(mask),          scale,
            q_scale,  k_scale, v_scale, opt(cu_seqlens_q), opt(cu_seqlens_kv), opt(kv_lens),
            opt(page_table), opt(sinks)};
  }
};

// The output's shape: q's with head_dim_v features.
std::vector<int64_t> output_sizes(const InputTensors& inputs);

// Fresh standard-normal q, k, v (and grad_out for bwd) from `seed`: never zeros, they hide
// unwritten outputs. fp8_e4m3 points draw the same numbers and quantize each tensor with the scale
// that maps its largest magnitude to fp8's largest (448); grad_out is then bf16. An fp8 KV cache
// (kv_dtype) quantizes k and v alike, v drawn 4x wider so the two scales differ. A paged cache's
// page table is filled in order or as a permutation drawn from `seed` (page_order).
InputTensors make_inputs(const Problem& problem, uint64_t seed);

// New values for every element of `t`, in place and outside any timed region: its bytes moved by
// one element (the last to the front), so the numbers stay those drawn (an fp8 tensor keeps its
// scale) while no position keeps its value. A backend keyed on its inputs' values sees new ones.
// In slices of at most `slice` elements: a 64 GiB cache moves with 128 MiB to spare.
void move_values(const at::Tensor& t, int64_t slice = int64_t{1} << 26);

// What changes before every timed sample of a forward call, as a serving engine's step changes
// them: q, k and v moved (move_values; MLA's v is a view of k and moves with it) and, for a paged
// cache, every used page-table entry rotated by `shift` pages (mod the pool): each sequence then
// reads other pages, in the same order (an in-order table stays in order but at one seam). No
// fingerprint of any part of any input keeps its value, so no state derived from earlier calls'
// inputs can stand in for this call's.
void move_inputs(InputTensors& in, int64_t shift);

// The used entries of a paged cache's table replaced by a permutation of the pages drawn from
// `seed` (page_order: shuffled's): what the correctness pass checks an in-order point with, so that
// a backend reading the cache as if it were contiguous is caught. Returns the table it replaced.
at::Tensor scatter_pages(InputTensors& in, uint64_t seed);

// Each input as a call found it: its shape and three sums over its bits (int64, wrapping), so that
// a backend that writes into its inputs (zeroes v, scales q, grows k, reorders a page table) is
// not judged on what it left: the values, their squares, and each value times its position (what
// a permutation of the values changes and the other two do not).
struct InputPrint {
  std::string name;
  std::vector<int64_t> sizes;
  int64_t sum = 0, sum_of_squares = 0, by_position = 0;
  bool same_as(const InputPrint& o) const {
    return name == o.name && sizes == o.sizes && sum == o.sum &&
           sum_of_squares == o.sum_of_squares && by_position == o.by_position;
  }
};
std::vector<InputPrint> input_prints(const InputTensors& in);
// The name of the first input whose print differs from `before`'s; empty when none does.
std::string changed_input(const std::vector<InputPrint>& before,
                          const std::vector<InputPrint>& after);

// Sequence b's keys and values as [kv_heads, kv_len(b), head_dim] views or gathers, read through
// the page table when paged: what the reference attends over.
std::pair<at::Tensor, at::Tensor> sequence_kv(const InputTensors& inputs, int64_t b);

// The sequences the float64 check reads: the first, the last, the longest, and up to three drawn
// from `seed`.
std::vector<int64_t> checked_sequences(const Problem& problem, uint64_t seed);
// The query rows of a sequence of `seq` rows it reads: the first and the last (a window's edges),
// and up to 62 more drawn from `seed`, in order.
std::vector<int64_t> checked_rows(int64_t seq, uint64_t seed);

// How far a backend's result is from float64 attention; NaN when it has a non-finite value.
struct ReferenceError {
  double rel_err = 0;  // forward: the float64 check's worst row, on the drawn rows
  std::string worst;   // which result: "out", "dq", "dk" or "dv"
  double whole_rel_err = 0;  // forward: the worst row of the whole output, against float32
  // One number to hold against the tolerance: the whole output's error counts at
  // 1 / kWholeOutputSlack of its size.
  double judged() const { return std::max(rel_err, whole_rel_err / kWholeOutputSlack); }
};

// q, k or v as the float64 values a backend must attend over (its fp8 numbers times the scale).
at::Tensor dequantized(const at::Tensor& t, double scale);
// An fp8 tensor as bf16 (exactly: not every op takes fp8); any other as it is.
at::Tensor widened(const at::Tensor& t);
// The pages sequence b of a paged problem fills: ceil(kv_len(b) / page_size).
int64_t pages_of(const Problem& problem, int64_t b);
// [rows, keys] true where query row i (at position rows[i] of its sequence) may not see key j,
// bottom-right (row i stands at key rows[i] + offset): outside the window [pos - left, pos +
// right] (-1: unbounded) or outside its chunk (chunk > 0). make_inputs' mask and the reference's.
at::Tensor masked(const at::Tensor& rows, int64_t keys, int64_t offset, int64_t left,
                  int64_t right, int64_t chunk);

// Forward: the largest per-row relative error ||out - ref|| / ||ref||, two ways (whole_rel_err,
// then rel_err). Every row of every head of every sequence against attention in float32 on the
// output's device (its error, ~1e-6, is far below every tolerance), in blocks of query rows of
// about `block_scores` scores so that nothing of size seq_len x seq_len_kv is made: a backend
// that computes some sequences, heads or rows and leaves the rest is caught wherever they are.
// And the checked sequences and rows above against float64, every head (the float32 reference's
// own check). The window and the softcap are applied in both.
ReferenceError forward_error(const InputTensors& inputs, const at::Tensor& out,
                             int64_t block_scores = int64_t{1} << 26);

// The float64 check's parts (forward_error's second half): the reference at the drawn rows of the
// checked sequences, every kv head with its query heads, one tensor each; the output at the same
// rows, in the same order; and the worst per-row relative error of one against the other (NaN
// where `got` has a non-finite value).
std::vector<at::Tensor> checked_reference(const InputTensors& inputs);
std::vector<at::Tensor> checked_output(const InputTensors& inputs, const at::Tensor& out);
double worst_row_error(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& ref);

// A variant the point has, and the inputs of the same point without it: the window or the chunk
// unbounded, no softcap, no sinks, an fp8 cache's v read with k's scale, MLA's q without its rope
// columns. What a kernel that takes the variant and ignores it computes.
struct PointVariant {
  std::string name;
  InputTensors without;
};
std::vector<PointVariant> point_variants(const InputTensors& inputs);
// Each of the point's variants on the float64 check's rows (pass_results.hpp: VariantCheck), or
// only the one named `only`.
std::vector<VariantCheck> check_variants(const InputTensors& inputs, const at::Tensor& out,
                                         const std::string& only = "");
// How much wider q is drawn for the softcap's own checked call (scores spread to a quarter of the
// cap, their usual unit at least): unit scores under a cap of 30 or 50 barely bend, so a kernel
// ignoring the cap would pass by luck of the values. 1: no call of its own (no softcap, fp8 q).
double softcap_bite(const Problem& problem);

// A result's memory filled with NaN, in place (fp8: its NaN byte): what a kernel leaves unwritten
// of a buffer it is handed, or of memory the allocator hands out again, fails the check.
void poison(const at::Tensor& t);

// Backward: dq, dk, dv against float64 autograd of the same attention, for the first and last
// batch entry and kv head (with every query head of its group, since dk and dv sum over them).
// The error of each is normwise per head, ||got - ref||_F / ||ref||_F: a row of dk can be tiny
// where the causal mask lets few queries see that key. The reference runs on query blocks of about
// `block_scores` scores (2^24: 128 MiB of float64), so its memory is a block x seq_len_kv, not
// seq_len x seq_len_kv; tests make the blocks small to reach the multi-block path on small shapes.
ReferenceError backward_error(const InputTensors& inputs, const at::Tensor& dq,
                              const at::Tensor& dk, const at::Tensor& dv,
                              int64_t block_scores = int64_t{1} << 24);

}  // namespace attnbench
