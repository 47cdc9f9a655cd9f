// How a point is measured, the LibTorch half of kinds and variants: the inputs the harness owns
// (created outside every timed region), how they move before each timed sample, and the float64
// checks of what a backend returns. A kind's file implements KindTensors, a variant's
// VariantTensors (kinds/list.hpp exports them); the functions below are what the passes call, and
// they reach a kind or a variant only through those. Included only by translation units that use
// ATen.
#pragma once

#include "kinds/checks.hpp"

#include <attnbench/backend.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnbench {

at::ScalarType scalar_type(DType dtype);

struct InputTensors {
  Problem problem;
  at::Tensor q, k, v;  // in the problem's layout (backend.hpp): uniform, packed or paged
  at::Tensor mask;     // uniform: [seq_len, seq_len_kv], causal and the variants'; undefined: none
  at::Tensor grad_out;  // like q; undefined unless the problem is bwd
  // Packed layout: int32 on q's device (backend.hpp's Inputs), and host copies of the offsets.
  at::Tensor cu_seqlens_q, cu_seqlens_kv, kv_lens, page_table;
  // The kind's and the variants' own inputs by name (Inputs::input()): "sinks", "indices".
  std::vector<std::pair<std::string, at::Tensor>> named;
  // A kind's own copies, never handed to a backend: what a call updates in place as it was drawn
  // (a linear-attention kind's state pool), which its reference starts from.
  std::vector<std::pair<std::string, at::Tensor>> held;
  double scale = 1;
  double q_scale = 1, k_scale = 1, v_scale = 1;  // fp8: value = fp8 number * scale
  uint64_t seed = 0;  // what the values were drawn from; the float64 check draws its positions too

  // The named input `name`; undefined when the point has none.
  const at::Tensor& input(const std::string& name) const;
  // Sets (or replaces) the named input `name`; removes it when `t` is undefined.
  void set_input(const std::string& name, at::Tensor t);
  // The held copy `name` (undefined when there is none), and setting it.
  const at::Tensor& held_copy(const std::string& name) const;
  void hold(const std::string& name, at::Tensor t);
  // What a backend is handed. Its named inputs point into this object: valid while it lives, and
  // until view() is called again.
  Inputs view() const;

 private:
  mutable std::vector<std::pair<std::string, const at::Tensor*>> named_view_;
};

// A check of a variant or a kind: the same point's inputs without it (or with it misread), what
// a backend ignoring it computes. `what` and `verdict` word it (VariantCheck).
struct PointVariant {
  std::string name;
  InputTensors without;
  std::string what, verdict;
};

// The LibTorch half of a problem kind (kinds/problem_kind.hpp), in its file under
// ATTNBENCH_TENSORS. The defaults are attention over the widths the kind derives.
class KindTensors {
 public:
  virtual ~KindTensors() = default;
  // Draws q, k and v in the point's layout (draw_layout() does the layout's part) and the kind's
  // named inputs, from the seed already set (at::manual_seed). The variants' draws and the
  // quantization of fp8 tensors follow.
  virtual void draw(InputTensors& in) const;
  // Its named inputs changed before each timed sample (q, k, v and the page table are moved by the
  // harness), so that no state kept from an earlier call stands in for this one's.
  virtual void move(InputTensors& /*in*/, int64_t /*shift*/) const {}
  // Attention of sequence b's query rows at positions `rows` (q: [kv_heads, group, n, head_dim],
  // each query head under its kv head, already dequantized, in the reference's float type) over
  // the sequence's keys and values (k: [kv_heads, 1, kv_len, head_dim], v likewise with
  // head_dim_v), query heads from first_head on: [kv_heads, group, n, head_dim_v]. The default is
  // dense attention with the variants' hooks (attend_dense()).
  virtual at::Tensor attend(const InputTensors& in, int64_t b, const at::Tensor& q,
                            const at::Tensor& k, const at::Tensor& v, const at::Tensor& rows,
                            int64_t first_head) const;
  // Its own checks: the inputs of the point without what defines the kind, or with it misread.
  virtual std::vector<PointVariant> checks(const InputTensors& /*in*/) const { return {}; }
  // The output's shape; by default q's with head_dim_v features.
  virtual std::vector<int64_t> output_sizes(const InputTensors& in) const;
  // A kind whose output is not attention's (an indexer's selection) judges it itself: the error
  // forward_error() returns; none (the default): attention's checks against attend().
  virtual std::optional<ReferenceError> error(const InputTensors& /*in*/,
                                              const at::Tensor& /*out*/) const {
    return std::nullopt;
  }
  // Whether its backward pass is checked here (kinds/reference.cpp: autograd of attend()).
  virtual bool checks_backward() const { return true; }
  // The named inputs a call updates in place, as an engine's step updates a recurrent state pool.
  // They are left out of the check that a backend wrote into no input; the kind judges them in
  // error(), and puts them back as drawn (restore()) before each checked call and, through
  // move(), before each timed sample (so that a kind with any is timed one call a sample).
  virtual std::vector<std::string> written_inputs() const { return {}; }
  virtual void restore(InputTensors& /*in*/) const {}
  // The float64 check's rows, reference and output, one tensor each (what the checks of kinds
  // and variants compare, check_variants()); by default attention's: checked_reference() and
  // checked_output() below.
  virtual std::vector<at::Tensor> reference_rows(const InputTensors& in) const;
  virtual std::vector<at::Tensor> output_rows(const InputTensors& in, const at::Tensor& out) const;
  // The worst error of such rows against their reference (NaN where `got` is not finite); by
  // default worst_row_error() below, each row against its own norm.
  virtual double worst_error(const std::vector<at::Tensor>& got,
                             const std::vector<at::Tensor>& ref) const;
};

// The LibTorch half of a variant (kinds/variant.hpp), in its file under ATTNBENCH_TENSORS: its
// inputs and its hooks in the reference (each called only on points that have it).
class VariantTensors {
 public:
  virtual ~VariantTensors() = default;
  // Its named inputs and its changes to q, k, v once they are drawn, before fp8 tensors are
  // quantized (from the seed, which the draws before set).
  virtual void draw(InputTensors& /*in*/) const {}
  // The scores once scaled, before the mask (a softcap).
  virtual at::Tensor scores(const Problem& /*problem*/, const at::Tensor& scores) const {
    return scores;
  }
  // The keys it masks: [rows, keys] true where query row i (at position rows[i] + offset of a
  // sequence of `keys` keys, bottom-right) may not see key j; undefined: none.
  virtual at::Tensor masked(const Problem& /*problem*/, const at::Tensor& /*rows*/,
                            int64_t /*keys*/, int64_t /*offset*/) const {
    return {};
  }
  // A column of its own in every row's softmax (sinks), for query heads first .. first + count:
  // [count] in float; undefined: none.
  virtual at::Tensor extra_logits(const InputTensors& /*in*/, int64_t /*first*/,
                                  int64_t /*count*/) const {
    return {};
  }
  // Its checks: the inputs without it, one per check_names() entry.
  virtual std::vector<PointVariant> without(const InputTensors& in) const = 0;
  // How much wider q is drawn for a checked call of its own, so that it bites (a softcap's scores
  // spread to a quarter of the cap); 1: no call of its own.
  virtual double own_call_spread(const Problem& /*problem*/) const { return 1; }
};

// The LibTorch halves of `problem`'s kind and of a variant.
const KindTensors& kind_tensors(const Problem& problem);
const VariantTensors& variant_tensors(const std::string& variant);

// Draws q, k and v (and grad_out, and a paged cache's page table) in the point's layout from the
// seed already set: what KindTensors::draw() does by default.
void draw_layout(InputTensors& in);
// Dense attention of query rows over keys with the point's variants' hooks: what
// KindTensors::attend() does by default (its arguments).
at::Tensor attend_dense(const InputTensors& in, const at::Tensor& q, const at::Tensor& k,
                        const at::Tensor& v, const at::Tensor& rows, int64_t offset,
                        int64_t first_head);
// The softmax of `scores` ([..., heads, n, keys], query heads from first_head on, in order) with
// the point's variants' score hooks and extra columns, after masking `masked` (broadcast against
// the scores; undefined: none): the part of attention every kind shares.
at::Tensor softmax_of(const InputTensors& in, at::Tensor scores, const at::Tensor& masked,
                      int64_t first_head);
// The keys the causal mask and the point's variants hide from query rows at positions rows[i] +
// offset of a sequence of `keys` keys: [rows, keys] bool; undefined when none are hidden.
at::Tensor hidden_keys(const Problem& problem, const at::Tensor& rows, int64_t keys, int64_t offset);

// The output's shape: the kind's (q's with head_dim_v features for attention's kinds).
std::vector<int64_t> output_sizes(const InputTensors& inputs);

// Fresh standard-normal q, k, v (and grad_out for bwd) from `seed`: never zeros, they hide
// unwritten outputs; then the kind's and the variants' own inputs (their draw()). fp8_e4m3 points
// draw the same numbers and quantize each tensor with the scale that maps its largest magnitude to
// fp8's largest (448); grad_out is then bf16. An fp8 KV cache (kv_dtype) quantizes k and v alike.
// A paged cache's page table is filled in order or as a permutation drawn from `seed`
// (page_order). The uniform layout's mask: the causal mask and the variants' (hidden_keys()).
InputTensors make_inputs(const Problem& problem, uint64_t seed);

// New values for every element of `t`, in place and outside any timed region: its bytes moved by
// one element (the last to the front), so the numbers stay those drawn (an fp8 tensor keeps its
// scale) while no position keeps its value. A backend keyed on its inputs' values sees new ones.
// In slices of at most `slice` elements: a 64 GiB cache moves with 128 MiB to spare.
void move_values(const at::Tensor& t, int64_t slice = int64_t{1} << 26);

// What changes before every timed sample of a forward call, as a serving engine's step changes
// them: q, k and v moved (move_values; MLA's v is a view of k and moves with it), for a paged
// cache every used page-table entry rotated by `shift` pages (mod the pool): each sequence then
// reads other pages, in the same order (an in-order table stays in order but at one seam), and the
// kind's own inputs moved by the kind (KindTensors::move()). No fingerprint of any part of any
// input keeps its value, so no state derived from earlier calls' inputs can stand in for this
// call's.
void move_inputs(InputTensors& in, int64_t shift);

// The used entries of a paged cache's table moved to other pages drawn from `seed`: every used
// entry changes (a random cycle through them; one page in use stays, being read in order anyway).
// What the correctness pass checks an in-order point with, so that a backend reading the cache as
// if it were contiguous is caught. Returns the table it replaced.
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

// q, k or v as the float64 values a backend must attend over (its fp8 numbers times the scale).
at::Tensor dequantized(const at::Tensor& t, double scale);
// An fp8 tensor as bf16 (exactly: not every op takes fp8); any other as it is.
at::Tensor widened(const at::Tensor& t);
// The pages sequence b of a paged problem fills: ceil(kv_len(b) / page_size).
int64_t pages_of(const Problem& problem, int64_t b);
// The positions rows[i] + offset of query rows as [rows, 1] and the keys' as [1, keys]: what a
// variant's mask compares (key > pos: ahead of the query).
std::pair<at::Tensor, at::Tensor> positions(const at::Tensor& rows, int64_t keys, int64_t offset);

// Forward: the largest per-row relative error ||out - ref|| / ||ref||, two ways (whole_rel_err,
// then rel_err). Every row of every head of every sequence against attention in float32 on the
// output's device (its error, ~1e-6, is far below every tolerance), in blocks of query rows of
// about `block_scores` scores so that nothing of size seq_len x seq_len_kv is made: a backend
// that computes some sequences, heads or rows and leaves the rest is caught wherever they are.
// And the checked sequences and rows above against float64, every head (the float32 reference's
// own check). Both read the kind's reference (KindTensors::attend()).
ReferenceError forward_error(const InputTensors& inputs, const at::Tensor& out,
                             int64_t block_scores = int64_t{1} << 26);

// The float64 check's parts (forward_error's second half): the reference at the drawn rows of the
// checked sequences, every kv head with its query heads, one tensor each; the output at the same
// rows, in the same order; and the worst per-row relative error of one against the other (NaN
// where `got` has a non-finite value).
std::vector<at::Tensor> checked_reference(const InputTensors& inputs);
std::vector<at::Tensor> checked_output(const InputTensors& inputs, const at::Tensor& out);
double worst_row_error(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& ref);
// Per row (the last dimension), ||got - ref|| / ||ref||; 0 for a row whose reference is
// undefined (a query that sees no key).
at::Tensor row_errors(const at::Tensor& got, const at::Tensor& ref);

// The point's checks: its kind's (KindTensors::checks()) and each of its variants' (their
// without()), each the inputs of the same point without it: what a kernel that takes it and
// ignores it computes.
std::vector<PointVariant> point_variants(const InputTensors& inputs);
// Each check on the float64 check's rows (checks.hpp: VariantCheck), or only those of the variant
// named `only`.
std::vector<VariantCheck> check_variants(const InputTensors& inputs, const at::Tensor& out,
                                         const std::string& only = "");
// The variants of the point that want a checked call of their own with q drawn wider, and how much
// wider (VariantTensors::own_call_spread() above 1).
std::vector<std::pair<std::string, double>> own_call_spreads(const Problem& problem);

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
