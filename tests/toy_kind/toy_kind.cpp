// Two kinds a test adds to the list, as a new kind of attention is added: one file, one line.
//  - `toy`: multi-query attention written as a width; it derives head_dim and kv_heads from its
//    own field and has a scale of its own.
//  - `leaky`: a kind whose own field has no id part, so that two of its points share an id: the
//    sweep must refuse them, never keep one silently.
#include "toy_kind.hpp"

#include "kinds/problem_kind.hpp"

namespace attnbench::test {

namespace {

Field<Problem> count_in(const char* name, int64_t Problem::*m, const char* id_word) {
  Field<Problem> f = field(name, m, "count", std::string("toy: ") + name);
  if (id_word)
    f.id_part = [m, id_word](const Problem& p) {
      return "-" + std::string(id_word) + std::to_string(p.*m);
    };
  return f;
}

class ToyKind final : public ProblemKind {
 public:
  std::string name() const override { return "toy"; }
  std::string summary() const override { return "multi-query attention written as a width"; }
  std::string id_prefix() const override { return "toy-"; }
  std::vector<Field<Problem>> own_fields() const override {
    return {owned_by(name(), count_in("width", &Problem::head_dim, "w"))};
  }
  std::vector<std::string> derived_axes() const override { return {"head_dim", "kv_heads"}; }
  void complete(Problem& p) const override {
    p.kv_heads = 1;
    p.head_dim_v = p.head_dim;
    p.v_in_k = false;
    if (p.scale == 0) p.scale = default_scale(p);
  }
  double default_scale(const Problem& p) const override {
    return 1.0 / static_cast<double>(p.head_dim);
  }
};

class LeakyKind final : public ProblemKind {
 public:
  std::string name() const override { return "leaky"; }
  std::string summary() const override { return "a kind whose field is left out of its id"; }
  std::string id_prefix() const override { return "leaky-"; }
  std::vector<Field<Problem>> own_fields() const override {
    return {owned_by(name(), count_in("depth", &Problem::page_size, nullptr))};
  }
  void complete(Problem& p) const override {
    p.head_dim_v = p.head_dim;
    if (p.scale == 0) p.scale = default_scale(p);
  }
  double default_scale(const Problem&) const override { return 0.5; }
};

}  // namespace

const ProblemKind& toy_kind() {
  static const ToyKind kind;
  return kind;
}
const ProblemKind& leaky_kind() {
  static const LeakyKind kind;
  return kind;
}

}  // namespace attnbench::test
