// `softcap`: Gemma 2's logit cap: each score s becomes softcap * tanh(s / softcap) before the mask
// and the softmax.
#include "kinds/list.hpp"
#include "kinds/variant.hpp"

#include "base/names.hpp"

#include <cmath>
#include <cstdio>

namespace attnbench {

namespace {

Field<Problem> softcap_field() {
  Field<Problem> f = field(
      "softcap", &Problem::softcap, "",
      "above 0: scores s become softcap * tanh(s / softcap) before the softmax (Gemma-2: 50)");
  f.id_part = [](const Problem& p) -> std::string {
    if (p.softcap <= 0) return "";
    char cap[32];
    std::snprintf(cap, sizeof cap, "-cap%g", p.softcap);
    return cap;
  };
  return f;
}

class Softcap final : public ProblemVariant {
 public:
  std::string name() const override { return "softcap"; }
  std::string words() const override { return "a softcap"; }
  std::string summary() const override {
    return "Gemma 2's logit cap: scores become softcap * tanh(score / softcap)";
  }
  std::vector<std::string> kinds() const override { return {"attention"}; }
  std::vector<Field<Problem>> fields() const override { return {softcap_field()}; }
  bool present(const Problem& p) const override { return p.softcap > 0; }
  bool in_abi4() const override { return true; }
  std::optional<FieldRefusal> refuse(const Problem& p) const override {
    // A cap past the dtype's largest number is infinite in it: every score NaN.
    const double largest = p.dtype == DType::f16 ? 65504.0 : 3.3895313892515355e38;
    if (p.softcap > largest)
      return FieldRefusal{"softcap", "softcap " + format_number(p.softcap) +
                                         " is past the largest number of " + to_string(p.dtype) +
                                         "'s scores (" + format_number(largest) + ")"};
    return std::nullopt;
  }
  std::vector<PythonKeyword> python_keywords() const override {
    return {{"softcap", [](const Problem& p) { return std::vector<double>{p.softcap}; }}};
  }
};

}  // namespace

}  // namespace attnbench

#ifdef ATTNBENCH_TENSORS
#include "kinds/tensors.hpp"

namespace attnbench {
namespace {
class SoftcapTensors final : public VariantTensors {
 public:
  at::Tensor scores(const Problem& p, const at::Tensor& scores) const override {
    return at::tanh(scores / p.softcap) * p.softcap;
  }
  std::vector<PointVariant> without(const InputTensors& in) const override {
    InputTensors copy = in;
    copy.problem.softcap = 0;
    return {{"softcap", std::move(copy), "", ""}};
  }
  // Scores spread to a quarter of the cap, their usual unit at least: unit scores under a cap of
  // 30 or 50 barely bend, so a kernel ignoring the cap would pass by luck of the values. fp8 q has
  // no room to be drawn wider.
  double own_call_spread(const Problem& p) const override {
    if (p.dtype == DType::fp8_e4m3) return 1;
    const double natural = p.softmax_scale() * std::sqrt(static_cast<double>(p.head_dim));
    return natural > 0 ? std::max(1.0, p.softcap / 4 / natural) : 1.0;
  }
};
}  // namespace
}  // namespace attnbench
#endif

namespace attnbench {
ATTNBENCH_VARIANT(softcap, Softcap, SoftcapTensors)
}  // namespace attnbench
