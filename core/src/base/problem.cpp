#include "base/problem.hpp"

#include "base/names.hpp"

#include <algorithm>
#include <cmath>

namespace attnbench {

const std::vector<Field<Problem>>& problem_fields() {
  using P = Problem;
  static const std::vector<Field<P>> fields = {
      field("batch", &P::batch, "count", "sequences; q is [batch, heads, seq_len, head_dim]"),
      field("heads", &P::heads, "count", "query heads"),
      field("kv_heads", &P::kv_heads, "count",
            "key/value heads; below `heads`: grouped-query attention (head h reads h / group)"),
      field("seq_len", &P::seq_len, "count", "query positions per sequence (decode: 1)"),
      field("seq_len_kv", &P::seq_len_kv, "count",
            "key/value positions; above seq_len a query block runs against a longer cache"),
      field("head_dim", &P::head_dim, "count", "features per head"),
      field("dtype", &P::dtype, "", "`fp16`, `bf16` or `fp32`"),
      field("causal", &P::causal, "",
            "causal mask aligned bottom-right (query i sees keys 0 .. i + seq_len_kv - seq_len)"),
      field("device", &P::device, "", "`cpu` or `cuda`"),
      field("direction", &P::direction, "",
            "`fwd`, or `bwd`: the backward pass alone is timed (docs/timing.md)"),
  };
  return fields;
}

const Field<Problem>* find_problem_field(const std::string& name) {
  return find_field(problem_fields(), name);
}


std::string point_id(const Problem& p) {
  std::string id = "b" + std::to_string(p.batch) + "-h" + std::to_string(p.heads);
  if (p.kv_heads != p.heads) id += "-kv" + std::to_string(p.kv_heads);
  id += "-s" + std::to_string(p.seq_len);
  if (p.seq_len_kv != p.seq_len) id += "-skv" + std::to_string(p.seq_len_kv);
  id += "-d" + std::to_string(p.head_dim) + "-" + to_string(p.dtype) +
        (p.causal ? "-causal-" : "-full-") + to_string(p.device);
  if (p.direction != Direction::fwd) id += "-" + to_string(p.direction);
  return id;
}

double attended_pairs(const Problem& p) {
  const double s = static_cast<double>(p.seq_len);
  const double skv = static_cast<double>(p.seq_len_kv);
  if (!p.causal) return s * skv;
  // Query i sees keys 0 .. i + skv - s: rows 0 .. s-1 see (skv - s + 1) .. skv keys, each at
  // least none.
  const double offset = skv - s;
  const double first = std::max(0.0, -offset);  // rows before this see no key
  double pairs = 0;
  const double rows = s - first;
  if (rows > 0) pairs = rows * (offset + 1) + (first + s - 1) * rows / 2;
  return pairs;
}

double scaled_tolerance(double base, const Problem& p) {
  const double dim = std::max(1.0, std::sqrt(static_cast<double>(p.head_dim) / 64.0));
  const double keys = static_cast<double>(p.seq_len_kv);
  const double length = keys > 1024 ? 1 + std::log2(keys / 1024) / 16 : 1.0;
  return base * dim * length;
}

double attention_flop(const Problem& p) {
  // QK^T and PV: 2 FLOP per multiply-add, head_dim multiply-adds per (query, key) pair each.
  // In double throughout: the int64 product of batch, heads and head_dim can overflow.
  const double forward = 4.0 * static_cast<double>(p.batch) * static_cast<double>(p.heads) *
                         static_cast<double>(p.head_dim) * attended_pairs(p);
  return p.direction == Direction::bwd ? 2.5 * forward : forward;
}

}  // namespace attnbench
