// `ragged`: each sequence of the batch at its own lengths (seq_lens, seq_lens_kv: common fields),
// its query rows packed one sequence after another with offsets (cu_seqlens_q).
#include "kinds/list.hpp"
#include "kinds/variant.hpp"

namespace attnbench {

namespace {

class Ragged final : public ProblemVariant {
 public:
  std::string name() const override { return "ragged"; }
  std::string words() const override { return "ragged lengths"; }
  std::string summary() const override {
    return "each sequence at its own lengths (seq_lens, seq_lens_kv), q packed with offsets";
  }
  bool present(const Problem& p) const override { return p.ragged(); }
  bool in_abi4() const override { return true; }
  std::vector<std::string> python_needs() const override { return {"cu_seqlens_q"}; }
  std::vector<std::string> check_names() const override { return {}; }
};

}  // namespace

}  // namespace attnbench

#ifdef ATTNBENCH_TENSORS
#include "kinds/tensors.hpp"

namespace attnbench {
namespace {
// The layout is the harness's (draw_layout()); nothing of its own to check.
class RaggedTensors final : public VariantTensors {
 public:
  std::vector<PointVariant> without(const InputTensors&) const override { return {}; }
};
}  // namespace
}  // namespace attnbench
#endif

namespace attnbench {
ATTNBENCH_VARIANT(ragged, Ragged, RaggedTensors)
}  // namespace attnbench
