// A kind a test adds the way a new kind of attention is added: this file and one line
// (add_problem_kind, seam_test.cpp). `biased`: attention with a learned bias per key (an input of
// its own, "key_bias", float32 [kv tokens of the cache]) added to every query's score of that key,
// as ALiBi-like position biases are. It owns a field (bias_scale: how wide the biases are drawn),
// draws and moves its input, has its own reference (the bias in the scores) and its own check (the
// bias ignored).
#include "seam.hpp"

#include "kinds/problem_kind.hpp"
#include "kinds/tensors.hpp"

#include <cmath>

namespace attnbench::test {

namespace {

class BiasedKind final : public ProblemKind {
 public:
  std::string name() const override { return "biased"; }
  std::string summary() const override { return "attention with a bias per key"; }
  std::string id_prefix() const override { return "biased-"; }
  std::vector<Field<Problem>> own_fields() const override {
    Field<Problem> f = extra_field("bias_scale", FieldType::number, "",
                                   "biased: the spread of the keys' biases", 2.0);
    f.id_part = [](const Problem& p) {
      return "-bias" + format_number(p.extra_number("bias_scale", 2));
    };
    return {owned_by(name(), f)};
  }
  void complete(Problem& p) const override {
    p.head_dim_v = p.head_dim;
    p.v_in_k = false;
    if (p.scale == 0) p.scale = default_scale(p);
  }
  double default_scale(const Problem& p) const override {
    return 1.0 / std::sqrt(static_cast<double>(p.head_dim));
  }
  std::vector<std::string> input_names() const override { return {"key_bias"}; }
  std::vector<std::string> check_names() const override { return {"key_bias"}; }
};

// Sequence b's keys' biases, the cache's rows in the uniform layout (b * seq_len_kv on).
at::Tensor biases_of(const InputTensors& in, int64_t b) {
  const Problem& p = in.problem;
  return in.input("key_bias").narrow(0, b * p.seq_len_kv, p.seq_len_kv);
}

class BiasedTensors final : public KindTensors {
 public:
  void draw(InputTensors& in) const override {
    draw_layout(in);
    const Problem& p = in.problem;
    in.set_input("key_bias", (at::randn({p.batch * p.seq_len_kv}, at::kFloat) *
                              p.extra_number("bias_scale", 2))
                                 .to(in.q.device()));
  }
  void move(InputTensors& in, int64_t) const override { move_values(in.input("key_bias")); }
  at::Tensor attend(const InputTensors& in, int64_t b, const at::Tensor& q, const at::Tensor& k,
                    const at::Tensor& v, const at::Tensor& rows, int64_t first_head) const override {
    const int64_t offset = in.problem.kv_len(b) - in.problem.q_len(b);
    const at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) * in.scale +
                              biases_of(in, b).to(q.device(), q.scalar_type());
    const at::Tensor hidden = hidden_keys(in.problem, rows, k.size(-2), offset);
    return at::matmul(softmax_of(in, scores, hidden, first_head), v);
  }
  std::vector<PointVariant> checks(const InputTensors& in) const override {
    InputTensors unbiased = in;
    unbiased.set_input("key_bias", at::zeros_like(in.input("key_bias")));
    return {{"key_bias", std::move(unbiased), "", ""}};
  }
};

}  // namespace

const ProblemKind& biased_kind() {
  static const BiasedKind kind;
  return kind;
}
const KindTensors& biased_kind_tensors() {
  static const BiasedTensors tensors;
  return tensors;
}

}  // namespace attnbench::test
