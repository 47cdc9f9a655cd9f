// Textbook attention with masked_fill in place (masked_fill_): no copy of the scores.
#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/autograd_backward.hpp>
#include <attnbench/sdpa/forced_sdpa.hpp>
#include <attnbench/sdpa/textbook_attention.hpp>

namespace {

class InplaceBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "inplace"; }
  std::string description() const override {
    return "matmul, scale, masked_fill_ (in place), softmax, matmul";
  }
  // MLA is attention over other widths (q·k 192 and v 128, or the latent 576 and 512), which
  // these ops take as they are; DSA the latent attention over each row's gathered tokens, and
  // its indexer's scores and top-k.
  std::vector<std::string> kinds() const override {
    return {"attention", "mla", "dsa", "dsa_indexer"};
  }
  std::vector<std::string> variants() const override {
    return attnbench::sdpa::textbook_variant_names();
  }
  attnbench::Support supports(const attnbench::Problem& problem) const override {
    if (problem.kind != "dsa_indexer")  // the indexer dequantizes fp8 q and keys itself
      if (auto s = attnbench::sdpa::no_fp8(problem, "the textbook attention (ATen ops)"); !s.supported) return s;
    return attnbench::sdpa::textbook_variants(problem);
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    return attnbench::textbook_attention(in, /*mask_in_place=*/true);
  }
  // Autograd through the five ops: the backward an unfused model gets.
  std::unique_ptr<attnbench::BackwardPass> prepare_backward(const attnbench::Inputs& in) override {
    return attnbench::autograd_backward(in, [](const attnbench::Inputs& i) {
      return attnbench::textbook_attention(i, /*mask_in_place=*/true);
    });
  }
};

}  // namespace

ATTNBENCH_PLUGIN(InplaceBackend)
