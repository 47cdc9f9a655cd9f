// SDPA forced to its cuDNN fused attention kernel: one fused kernel per call on CUDA.
#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/forced_sdpa.hpp>

namespace {

class CudnnBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "cudnn"; }
  std::string description() const override {
    return "scaled_dot_product_attention forced to CUDNN_ATTENTION (cuDNN picks a plan per shape)";
  }
  // MLA is attention over other widths (q·k 192 and v 128, or the latent 576 and 512), which
  // these ops take as they are.
  std::vector<std::string> kinds() const override { return {"attention", "mla"}; }
  attnbench::Support supports(const attnbench::Problem& problem) const override {
    if (auto s = attnbench::sdpa::pytorch_fused(problem, "cuDNN fused attention"); !s.supported) return s;
    return attnbench::sdpa::sdpa_variants(attnbench::sdpa::Kernel::cudnn, problem);
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    return attnbench::sdpa::forced_attention(attnbench::sdpa::Kernel::cudnn, in);
  }
  std::unique_ptr<attnbench::BackwardPass> prepare_backward(const attnbench::Inputs& in) override {
    return attnbench::sdpa::forced_backward(attnbench::sdpa::Kernel::cudnn, in);
  }
};

}  // namespace

ATTNBENCH_PLUGIN(CudnnBackend)
