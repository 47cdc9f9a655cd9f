#include <attnbench/sdpa/autograd_backward.hpp>

#include <torch/csrc/autograd/autograd.h>

#include <ATen/core/grad_mode.h>
#include <c10/core/InferenceMode.h>

namespace attnbench {

namespace {

class AutogradBackward final : public BackwardPass {
 public:
  AutogradBackward(const Inputs& in, const std::function<at::Tensor(const Inputs&)>& forward)
      : q_(in.q.detach().requires_grad_(true)),
        k_(in.k.detach().requires_grad_(true)),
        v_(in.v.detach().requires_grad_(true)) {
    at::AutoGradMode grad_mode(true);
    out_ = forward(Inputs{in.problem, q_, k_, v_, in.mask, in.scale, in.q_scale, in.k_scale,
                          in.v_scale, in.cu_seqlens_q, in.cu_seqlens_kv, in.kv_lens,
                          in.page_table, in.named});
    if (!out_.requires_grad())
      throw Unsupported("the forward is not differentiable: its output records no autograd graph");
  }

  void run(const at::Tensor& grad_out, at::Tensor& dq, at::Tensor& dk, at::Tensor& dv) override {
    const auto grads = torch::autograd::grad({out_}, {q_, k_, v_}, {grad_out},
                                             /*retain_graph=*/true);
    dq = grads[0], dk = grads[1], dv = grads[2];
  }

 private:
  at::Tensor q_, k_, v_, out_;
};

}  // namespace

std::unique_ptr<BackwardPass> autograd_backward(
    const Inputs& inputs, const std::function<at::Tensor(const Inputs&)>& forward) {
  if (c10::InferenceMode::is_enabled())
    throw std::logic_error("autograd_backward: called in inference mode, which records no graph");
  return std::make_unique<AutogradBackward>(inputs, forward);
}

}  // namespace attnbench
