// SDPA forced to its memory-efficient (CUTLASS, from xformers) kernel: one fused kernel per call on
// CUDA.
#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/forced_sdpa.hpp>

namespace {

class EfficientBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "efficient"; }
  std::string description() const override {
    return "scaled_dot_product_attention forced to EFFICIENT_ATTENTION (CUTLASS kernels from "
           "xformers)";
  }
  // MLA is attention over other widths (q·k 192 and v 128, or the latent 576 and 512), which
  // these ops take as they are.
  std::vector<std::string> kinds() const override { return {"attention", "mla"}; }
  attnbench::Support supports(const attnbench::Problem& problem) const override {
    if (auto s = attnbench::sdpa::pytorch_fused(problem, "memory-efficient (CUTLASS, from xformers)"); !s.supported) return s;
    return attnbench::sdpa::sdpa_variants(attnbench::sdpa::Kernel::efficient, problem);
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    return attnbench::sdpa::forced_attention(attnbench::sdpa::Kernel::efficient, in);
  }
  std::unique_ptr<attnbench::BackwardPass> prepare_backward(const attnbench::Inputs& in) override {
    return attnbench::sdpa::forced_backward(attnbench::sdpa::Kernel::efficient, in);
  }
};

}  // namespace

ATTNBENCH_PLUGIN(EfficientBackend)
