// `fp8_kv`: an fp8_e4m3 KV cache under bf16 or fp16 queries (kv_dtype, a common field), k and v
// each under a per-tensor scale: how engines serve decode.
#include "kinds/list.hpp"
#include "kinds/variant.hpp"

namespace attnbench {

namespace {

class Fp8Kv final : public ProblemVariant {
 public:
  std::string name() const override { return "fp8_kv"; }
  std::string words() const override { return "an fp8 KV cache"; }
  std::string summary() const override {
    return "an fp8_e4m3 KV cache under bf16 or fp16 queries, k and v under a scale each "
           "(kv_dtype: fp8_e4m3)";
  }
  bool present(const Problem& p) const override { return p.fp8_kv(); }
  // A function runs it when it takes both scales (the common keywords k_scale and v_scale).
  std::vector<std::string> python_needs() const override { return {"k_scale", "v_scale"}; }
  std::vector<std::string> check_names() const override { return {"fp8_v_scale"}; }
};

}  // namespace

}  // namespace attnbench

#ifdef ATTNBENCH_TENSORS
#include "kinds/tensors.hpp"

namespace attnbench {
namespace {
// v is drawn this much wider than k, so that its scale is this far from k's: a kernel dequantizing
// v with k's scale (or k with v's) is then far past any tolerance. A latent cache (v inside k) has
// one scale.
constexpr double kValueSpread = 4;

class Fp8KvTensors final : public VariantTensors {
 public:
  void draw(InputTensors& in) const override {
    if (!in.problem.v_in_k) in.v.mul_(kValueSpread);
  }
  std::vector<PointVariant> without(const InputTensors& in) const override {
    if (in.problem.v_in_k) return {};
    InputTensors copy = in;  // v dequantized with k's scale
    copy.v_scale = copy.k_scale;
    return {{"fp8_v_scale", std::move(copy), "", ""}};
  }
};
}  // namespace
}  // namespace attnbench
#endif

namespace attnbench {
ATTNBENCH_VARIANT(fp8_kv, Fp8Kv, Fp8KvTensors)
}  // namespace attnbench
