// Test plugin: loads and runs, but its answer is wrong (all zeros): rows end `wrong`.
#include <attnbench/plugin.hpp>

#include <ATen/ATen.h>

namespace {

class ZerosBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "zeros"; }
  std::string description() const override { return "returns zeros (test plugin)"; }
  attnbench::Support supports(const attnbench::Problem&) const override {
    return attnbench::Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs& in) override { return at::zeros_like(in.q); }
};

}  // namespace

ATTNBENCH_PLUGIN(ZerosBackend)
