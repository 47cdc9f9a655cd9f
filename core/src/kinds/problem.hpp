// Facts about a problem that every stage shares: its id and its useful work.
#pragma once

#include "base/field.hpp"

#include <attnbench/backend.hpp>

#include <string>

namespace attnbench {

// The problem's fields, the one table of its axes: the fields every kind has, each variant's and
// each problem kind's own (kinds/; a field two kinds share is one entry), and the derived
// columns. The sweep's keys and how their values are read (config/), the report's problem columns
// (records/fields.cpp), the `where:` of `expect:`, the Python bridge's `problem` object, the
// worker protocol, the point id and docs/columns.md's axis table. A new common axis is a member
// of Problem and an entry here; a kind's, an entry in its own_fields(); a variant's, in its
// fields().
const std::vector<Field<Problem>>& problem_fields();
const Field<Problem>* find_problem_field(const std::string& name);
bool problem_fields_made();  // whether the table was made (kinds are added before)

// Stable identifier of a problem, shared by the main and the kernel CSV: the kind's prefix and
// the id parts of its axes in the table's order, "b4-h16-s2048-d64-bf16-causal-cuda". kv_heads,
// seq_len_kv, the direction and the scale appear only when they are not their defaults:
// "b1-h32-kv8-s1-skv131072-d128-bf16-full-cuda", "b8-h16-s2048-d64-bf16-causal-cuda-bwd". The
// variants append their own parts: "-qlens-uniform-128-4096", "-kvlens-...", "-paged16-shuffled",
// "-win4095_0", "-cap50"; a kind its widths: "mla-b1-h128-s4096-bf16-causal-cuda-nope128-rope64-v128".
std::string point_id(const Problem& problem);

// (query, key) pairs of one sequence of `problem` with `queries` queries and `keys` keys that take
// part in the softmax: queries x keys, or under causal and the variants that narrow the keys a
// query sees (a window, a chunk: kinds/variant.hpp) only those it sees (aligned bottom-right).
double sequence_pairs(const Problem& problem, int64_t queries, int64_t keys);
// Keys some query of such a sequence can see: from the first query's lowest to the last one's
// highest.
int64_t keys_read(const Problem& problem, int64_t queries, int64_t keys);
// The same over the whole batch, each sequence at its own lengths.
double attended_pairs(const Problem& problem);

int64_t total_q_tokens(const Problem& problem);   // query rows of the batch
int64_t total_kv_tokens(const Problem& problem);  // key rows of the batch (a cache's, in full)

// The least a call must move, in bytes: q and the output once, and of k and v the keys some query
// can see (a window's span, not the whole cache) once (v inside k, MLA's latent cache, with k),
// plus the page table's entries. The backward pass reads q, k, v, out and grad_out and writes dq,
// dk and dv. Roofline's "bytes". The geometry's model: ProblemKind::bytes() by default.
double attention_bytes(const Problem& problem);

// Floating-point operations of the attention itself, FlashAttention's benchmark convention: two
// matrix products over the attended pairs forward, 2 (head_dim + head_dim_v) a pair and head (so
// backends that skip masked blocks and those that do not are compared on the same useful work),
// 2.5x that for the backward pass (five products instead of two).
double attention_flop(const Problem& problem);

// The limit for a row's rel_err: the dtype's `base` (config `tolerance:`, set for head_dim 64 and
// a reduction of up to 1024 keys) grown with the problem's reductions. Rounding the unscaled
// scores q.k (magnitude ~ sqrt(head_dim)) costs in proportion to sqrt(head_dim) (on the H200 naive
// bf16 reached 0.0166 at d64 and 0.0222 at d128); longer key reductions add a slow, logarithmic
// margin: base x sqrt(head_dim / 64) x (1 + log2(seq_len_kv / 1024) / 16) past 1024 keys (and
// never below base). A wrong mask or a dropped scale is off by 0.3 or more and still fails.
double scaled_tolerance(double base, const Problem& problem);

}  // namespace attnbench
