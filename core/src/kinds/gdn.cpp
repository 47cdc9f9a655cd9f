// `gdn`: gated delta-net (Qwen3-Next, the linear layers of Qwen3.5), a recurrence over a state
// per sequence and value head decayed by one gate a token and head (kinds/delta_rule.hpp,
// docs/linear-attention.md). Grouped value heads: each key head serves
// linear_num_value_heads / linear_num_key_heads of them.
#include "kinds/delta_rule.hpp"
#include "kinds/list.hpp"

namespace attnbench {

namespace {

class GdnKind final : public DeltaRuleKind {
 public:
  GdnKind() : DeltaRuleKind(GateShape::per_head) {}
  std::string name() const override { return "gdn"; }
  std::string summary() const override {
    return "gated delta-net (Qwen3-Next, Qwen3.5's linear layers): the delta rule over a state "
           "pool updated in place (inputs g [tokens, value heads], beta, state, state_indices)";
  }
  std::string id_prefix() const override { return "gdn-"; }
};

#ifdef ATTNBENCH_TENSORS
class GdnTensors final : public DeltaRuleTensors {
 public:
  GdnTensors() : DeltaRuleTensors(GateShape::per_head) {}
};
#endif

}  // namespace

ATTNBENCH_KIND(gdn, GdnKind, GdnTensors)

}  // namespace attnbench
