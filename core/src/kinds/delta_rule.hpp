// The gated delta rule, what kinds gdn (kinds/gdn.cpp) and kda (kinds/kda.cpp) share
// (docs/linear-attention.md): a recurrence over a state per sequence and value head instead of
// attention over a cache. Their fields (named as Qwen3-Next's and Qwen3.5's config.json name
// them), inputs (q, k, v packed; the gates, beta, a state pool updated in place and each
// sequence's slot), float64 reference (the recurrence, step by step), checks and work model; the
// two kinds differ in the gate's shape alone.
#pragma once

#include "kinds/problem_kind.hpp"

#include <string>
#include <vector>

namespace attnbench {

// gdn: one decay a token and value head; kda: one a token, value head and key channel.
enum class GateShape { per_head, per_key };

class DeltaRuleKind : public ProblemKind {
 public:
  explicit DeltaRuleKind(GateShape gate) : gate_(gate) {}
  std::vector<Field<Problem>> own_fields() const override;
  std::vector<std::string> derived_axes() const override;
  void complete(Problem& problem) const override;
  double default_scale(const Problem& problem) const override;
  std::vector<std::string> input_names() const override;
  std::vector<std::string> check_names() const override;
  std::optional<FieldRefusal> refuse(const Problem& problem) const override;
  double flop(const Problem& problem) const override;
  double bytes(const Problem& problem) const override;
  double tolerance(double base, const Problem& problem) const override;

 private:
  GateShape gate_;
};

}  // namespace attnbench

#ifdef ATTNBENCH_TENSORS
#include "kinds/tensors.hpp"

namespace attnbench {

class DeltaRuleTensors : public KindTensors {
 public:
  explicit DeltaRuleTensors(GateShape gate) : gate_(gate) {}
  void draw(InputTensors& in) const override;
  void move(InputTensors& in, int64_t shift) const override;
  std::vector<int64_t> output_sizes(const InputTensors& in) const override;
  std::optional<ReferenceError> error(const InputTensors& in, const at::Tensor& out) const override;
  std::vector<PointVariant> checks(const InputTensors& in) const override;
  bool checks_backward() const override { return false; }
  std::vector<std::string> written_inputs() const override { return {"state"}; }
  void restore(InputTensors& in) const override;
  std::vector<at::Tensor> reference_rows(const InputTensors& in) const override;
  std::vector<at::Tensor> output_rows(const InputTensors& in, const at::Tensor& out) const override;
  double worst_error(const std::vector<at::Tensor>& got,
                     const std::vector<at::Tensor>& ref) const override;

 private:
  GateShape gate_;
};

}  // namespace attnbench
#endif
