// `attention`: multi-head and grouped-query attention, q·k and v of one width (head_dim). Its
// variants (a sliding window, a softcap, sinks, chunked local attention; kinds/variants/) are
// its alone; ragged lengths, paged caches and fp8 caches every kind's. The kind every sweep had
// before kinds, so its ids have no prefix. Its measurement is the defaults': dense attention
// over its widths.
#include "kinds/list.hpp"
#include "kinds/problem_kind.hpp"

#include <cmath>

namespace attnbench {

namespace {

class AttentionKind final : public ProblemKind {
 public:
  std::string name() const override { return "attention"; }
  std::string summary() const override {
    return "multi-head and grouped-query attention: q, k and v of head_dim features, a softmax "
           "scale of 1/sqrt(head_dim) unless written";
  }
  std::string id_prefix() const override { return ""; }
  void complete(Problem& p) const override {
    p.head_dim_v = p.head_dim;
    p.v_in_k = false;
    if (p.scale == 0) p.scale = default_scale(p);
  }
  double default_scale(const Problem& p) const override {
    return 1.0 / std::sqrt(static_cast<double>(p.head_dim));
  }
};

}  // namespace

}  // namespace attnbench

#ifdef ATTNBENCH_TENSORS
#include "kinds/tensors.hpp"

namespace attnbench {
namespace {
class AttentionTensors final : public KindTensors {};
}  // namespace
}  // namespace attnbench
#endif

namespace attnbench {
ATTNBENCH_KIND(attention, AttentionKind, AttentionTensors)
}  // namespace attnbench
