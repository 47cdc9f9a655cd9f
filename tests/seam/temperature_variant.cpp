// A variant a test adds the way a new variant is added: this file and one line
// (add_problem_variant, seam_test.cpp). `temperature`: every score divided by a temperature
// before the softmax (a field of its own, attention's), a Python keyword, its hook in the
// reference and its check (the temperature ignored).
#include "seam.hpp"

#include "kinds/tensors.hpp"
#include "kinds/variant.hpp"

namespace attnbench::test {

namespace {

double temperature_of(const Problem& p) { return p.extra_number("temperature", 1); }

class Temperature final : public ProblemVariant {
 public:
  std::string name() const override { return "temperature"; }
  std::string words() const override { return "a softmax temperature"; }
  std::string summary() const override { return "scores divided by a temperature"; }
  std::vector<std::string> kinds() const override { return {"attention"}; }
  std::vector<Field<Problem>> fields() const override {
    Field<Problem> f = extra_field("temperature", FieldType::number, "",
                                   "scores divided by it before the softmax; 1: none", 1.0);
    f.id_part = [](const Problem& p) {
      return temperature_of(p) == 1 ? std::string() : "-temp" + format_number(temperature_of(p));
    };
    return {f};
  }
  bool present(const Problem& p) const override { return temperature_of(p) != 1; }
  std::optional<FieldRefusal> refuse(const Problem& p) const override {
    if (temperature_of(p) <= 0)
      return FieldRefusal{"temperature", "a temperature is above 0"};
    return std::nullopt;
  }
  std::vector<PythonKeyword> python_keywords() const override {
    return {{"temperature", [](const Problem& p) { return std::vector<double>{temperature_of(p)}; }}};
  }
};

class TemperatureTensors final : public VariantTensors {
 public:
  at::Tensor scores(const Problem& p, const at::Tensor& scores) const override {
    return scores / temperature_of(p);
  }
  std::vector<PointVariant> without(const InputTensors& in) const override {
    InputTensors copy = in;
    for (auto& [key, value] : copy.problem.extra)
      if (key == "temperature") value = "1";
    return {{"temperature", std::move(copy), "", ""}};
  }
};

}  // namespace

const ProblemVariant& temperature_variant() {
  static const Temperature variant;
  return variant;
}
const VariantTensors& temperature_variant_tensors() {
  static const TemperatureTensors tensors;
  return tensors;
}

}  // namespace attnbench::test
