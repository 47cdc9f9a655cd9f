// Test plugin: declares attention sinks and ignores them, as a kernel that takes a `sinks`
// argument and never applies it (vLLM shipped one: gpt-oss GSM8K 0.000 until fixed). FA2 through
// SDPA on CUDA, the textbook ops on the CPU, both without the sinks: its sink rows must read
// `wrong`, its other rows `ok`.
#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/forced_sdpa.hpp>
#include <attnbench/sdpa/textbook_attention.hpp>

#include <ATen/ATen.h>

namespace {

class SinkBlindBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "sink_blind"; }
  std::string description() const override {
    return "flash (CUDA) or textbook (CPU) attention that accepts sinks and ignores them (test "
           "plugin)";
  }
  std::vector<std::string> variants() const override { return {"sinks", "window"}; }
  attnbench::Support supports(const attnbench::Problem& p) const override {
    if (p.packed()) return attnbench::Support::no("uniform batches only");
    return attnbench::Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    attnbench::Inputs blind = in;
    blind.named = nullptr;  // the sinks taken, never applied
    return in.q.is_cuda() ? attnbench::sdpa::forced_attention(attnbench::sdpa::Kernel::flash, blind)
                          : attnbench::textbook_attention(blind, /*mask_in_place=*/true);
  }
};

}  // namespace

ATTNBENCH_PLUGIN(SinkBlindBackend)
