// `rope`: the rotary part of MLA's q·k (qk_rope_head_dim features, q's and k's last): every
// backend of an MLA kind runs it (no backend declares it), and a kernel that drops it is caught.
#include "kinds/list.hpp"
#include "kinds/variant.hpp"

namespace attnbench {

namespace {

class Rope final : public ProblemVariant {
 public:
  std::string name() const override { return "rope"; }
  std::string words() const override { return "the rope part of q·k"; }
  std::string summary() const override {
    return "MLA's rotary part of q·k (qk_rope_head_dim features, q's and k's last), part of the "
           "kind: checked, never declared";
  }
  std::vector<std::string> kinds() const override { return {"mla", "dsa"}; }
  bool present(const Problem& p) const override { return p.mla.qk_rope_head_dim > 0; }
  bool declared() const override { return false; }
};

}  // namespace

}  // namespace attnbench

#ifdef ATTNBENCH_TENSORS
#include "kinds/tensors.hpp"

namespace attnbench {
namespace {
class RopeTensors final : public VariantTensors {
 public:
  // q's rope columns (its last) zero: q·k without them.
  std::vector<PointVariant> without(const InputTensors& in) const override {
    const int64_t rope = in.problem.mla.qk_rope_head_dim;
    InputTensors copy = in;
    copy.q = widened(copy.q).clone();
    copy.q.narrow(-1, in.problem.head_dim - rope, rope).zero_();
    return {{"rope", std::move(copy), "", ""}};
  }
};
}  // namespace
}  // namespace attnbench
#endif

namespace attnbench {
ATTNBENCH_VARIANT(rope, Rope, RopeTensors)
}  // namespace attnbench
