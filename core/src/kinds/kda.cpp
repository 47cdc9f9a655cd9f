// `kda`: Kimi delta attention (Kimi Linear), gated delta-net's recurrence with one gate a token,
// head and key channel: the state's row i decays by its own exp(g[i]) (kinds/delta_rule.hpp,
// docs/linear-attention.md). As many value heads as key heads.
#include "kinds/delta_rule.hpp"
#include "kinds/list.hpp"

namespace attnbench {

namespace {

class KdaKind final : public DeltaRuleKind {
 public:
  KdaKind() : DeltaRuleKind(GateShape::per_key) {}
  std::string name() const override { return "kda"; }
  std::string summary() const override {
    return "Kimi delta attention (Kimi Linear): the delta rule with a gate per key channel over "
           "a state pool updated in place (inputs g [tokens, heads, key features], beta, state, "
           "state_indices)";
  }
  std::string id_prefix() const override { return "kda-"; }
};

#ifdef ATTNBENCH_TENSORS
class KdaTensors final : public DeltaRuleTensors {
 public:
  KdaTensors() : DeltaRuleTensors(GateShape::per_key) {}
};
#endif

}  // namespace

ATTNBENCH_KIND(kda, KdaKind, KdaTensors)

}  // namespace attnbench
