#include "base/problem.hpp"

#include "base/names.hpp"

namespace attnbench {

std::string point_id(const Problem& p) {
  return "b" + std::to_string(p.batch) + "-h" + std::to_string(p.heads) + "-s" +
         std::to_string(p.seq_len) + "-d" + std::to_string(p.head_dim) + "-" + to_string(p.dtype) +
         (p.causal ? "-causal-" : "-full-") + to_string(p.device);
}

double attention_flop(const Problem& p) {
  const double s = static_cast<double>(p.seq_len);
  const double score_pairs = p.causal ? s * (s + 1) / 2 : s * s;
  // QK^T and PV: 2 FLOP per multiply-add, head_dim multiply-adds per (query, key) pair each.
  return 4.0 * static_cast<double>(p.batch * p.heads * p.head_dim) * score_pairs;
}

}  // namespace attnbench
