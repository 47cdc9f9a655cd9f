// Test plugin: every call throws, as a kernel launch that fails would: rows end `error`.
#include <attnbench/plugin.hpp>

#include <ATen/ATen.h>

#include <stdexcept>

namespace {

class ThrowsBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "throws"; }
  std::string description() const override { return "throws from forward (test plugin)"; }
  attnbench::Support supports(const attnbench::Problem&) const override {
    return attnbench::Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs&) override {
    throw std::runtime_error("kernel launch failed: too many resources requested");
  }
};

}  // namespace

ATTNBENCH_PLUGIN(ThrowsBackend)
