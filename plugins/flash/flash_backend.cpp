// SDPA forced to its FlashAttention-2 kernel: one fused kernel per call on CUDA.
#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/forced_sdpa.hpp>

namespace {

class FlashBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "flash"; }
  std::string description() const override {
    return "scaled_dot_product_attention forced to FLASH_ATTENTION (FlashAttention-2)";
  }
  attnbench::Support supports(const attnbench::Problem& problem) const override {
    if (auto s = attnbench::sdpa::pytorch_fused(problem, "FlashAttention-2"); !s.supported) return s;
    return attnbench::sdpa::sdpa_variants(attnbench::sdpa::Kernel::flash, problem);
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    return attnbench::sdpa::forced_attention(attnbench::sdpa::Kernel::flash, in);
  }
  std::unique_ptr<attnbench::BackwardPass> prepare_backward(const attnbench::Inputs& in) override {
    return attnbench::sdpa::forced_backward(attnbench::sdpa::Kernel::flash, in);
  }
};

}  // namespace

ATTNBENCH_PLUGIN(FlashBackend)
