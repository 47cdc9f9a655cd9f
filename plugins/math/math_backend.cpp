// SDPA forced to its math backend: the safe reference, composed of ordinary ATen ops. On CUDA it
// upcasts fp16/bf16 to fp32 and launches many kernels.
#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/forced_sdpa.hpp>

namespace {

class MathBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "math"; }
  std::string description() const override {
    return "scaled_dot_product_attention forced to the MATH backend (unfused reference)";
  }
  // MLA is attention over other widths (q·k 192 and v 128, or the latent 576 and 512), which
  // these ops take as they are.
  std::vector<std::string> kinds() const override { return {"attention", "mla"}; }
  attnbench::Support supports(const attnbench::Problem& problem) const override {
    if (auto s = attnbench::sdpa::no_fp8(problem, "SDPA's math backend"); !s.supported) return s;
    return attnbench::sdpa::sdpa_variants(attnbench::sdpa::Kernel::math, problem);
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    return attnbench::sdpa::forced_attention(attnbench::sdpa::Kernel::math, in);
  }
  std::unique_ptr<attnbench::BackwardPass> prepare_backward(const attnbench::Inputs& in) override {
    return attnbench::sdpa::forced_backward(attnbench::sdpa::Kernel::math, in);
  }
};

}  // namespace

ATTNBENCH_PLUGIN(MathBackend)
