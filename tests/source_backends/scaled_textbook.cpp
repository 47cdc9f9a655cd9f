// A backend written as one source file (tests/source_backends): attnbench compiles it on first
// use, `backends: [{source: tests/source_backends/scaled_textbook.cpp}]`.
#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/forced_sdpa.hpp>
#include <attnbench/sdpa/textbook_attention.hpp>

#include "scaled_textbook.hpp"

namespace {

class ScaledTextbook final : public attnbench::Backend {
 public:
  std::string name() const override { return "scaled_textbook"; }
  std::string description() const override { return scaled_textbook::kDescription; }
  attnbench::Support supports(const attnbench::Problem& problem) const override {
    return attnbench::sdpa::no_fp8(problem, "textbook attention (ATen ops)");
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    return attnbench::textbook_attention(in, /*mask_in_place=*/true);
  }
};

}  // namespace

ATTNBENCH_PLUGIN(ScaledTextbook)
