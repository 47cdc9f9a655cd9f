// `sinks`: gpt-oss's attention sinks: a learned logit per query head joins every row's softmax,
// taking its share of the weight and giving no value.
#include "kinds/list.hpp"
#include "kinds/variant.hpp"

namespace attnbench {

namespace {

Field<Problem> sinks_field() {
  Field<Problem> f = field("sinks", &Problem::sinks, "",
                           "attention sinks (gpt-oss): a logit per query head joins every row's "
                           "softmax (drawn from the seed near the scores' log-sum-exp)");
  f.id_part = [](const Problem& p) { return std::string(p.sinks ? "-sinks" : ""); };
  return f;
}

class Sinks final : public ProblemVariant {
 public:
  std::string name() const override { return "sinks"; }
  std::string words() const override { return "attention sinks"; }
  std::string summary() const override {
    return "gpt-oss's sinks: a logit per query head in every row's softmax, input `sinks` "
           "(float32 [heads])";
  }
  std::vector<std::string> kinds() const override { return {"attention"}; }
  std::vector<Field<Problem>> fields() const override { return {sinks_field()}; }
  bool present(const Problem& p) const override { return p.sinks; }
  std::optional<FieldRefusal> refuse(const Problem& p) const override {
    if (p.sinks && p.direction == Direction::bwd)
      return FieldRefusal{"direction",
                          "attention sinks are checked in the forward pass only (the sinks' own "
                          "gradient is not checked here)"};
    return std::nullopt;
  }
  std::vector<PythonKeyword> python_keywords() const override { return {{"sinks", nullptr}}; }
  std::vector<std::string> input_names() const override { return {"sinks"}; }
};

}  // namespace

}  // namespace attnbench

#ifdef ATTNBENCH_TENSORS
#include "kinds/tensors.hpp"

#include <cmath>

namespace attnbench {
namespace {
class SinksTensors final : public VariantTensors {
 public:
  // Near the log-sum-exp of a row of the longest sequence's scores (log of the keys it sees, plus
  // a half for unit-variance scores), give or take a unit per head: each sink takes a share of its
  // head's weight that ignoring it, or reading another head's, visibly moves.
  void draw(InputTensors& in) const override {
    const Problem& p = in.problem;
    const int64_t seen =
        p.window_left >= 0 ? std::min(p.seq_len_kv, p.window_left + 1) : p.seq_len_kv;
    in.set_input("sinks", (at::randn({p.heads}, at::TensorOptions().dtype(at::kFloat)) +
                           std::log(static_cast<double>(std::max<int64_t>(seen, 1))) + 0.5)
                              .to(in.q.device()));
  }
  at::Tensor extra_logits(const InputTensors& in, int64_t first, int64_t count) const override {
    const at::Tensor& sinks = in.input("sinks");
    return sinks.defined() ? sinks.narrow(0, first, count) : at::Tensor();
  }
  std::vector<PointVariant> without(const InputTensors& in) const override {
    InputTensors copy = in;
    copy.problem.sinks = false;
    copy.set_input("sinks", at::Tensor());
    return {{"sinks", std::move(copy), "", ""}};
  }
};
}  // namespace
}  // namespace attnbench
#endif

namespace attnbench {
ATTNBENCH_VARIANT(sinks, Sinks, SinksTensors)
}  // namespace attnbench
