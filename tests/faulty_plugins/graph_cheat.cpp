// Test plugin: computes attention when called, but while a CUDA graph is being captured launches
// one small kernel and returns an output that nothing writes: its graph replays take a
// microsecond and compute nothing. Graph replays checked against new inputs make them `wrong`.
#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/textbook_attention.hpp>

#include "capturing.hpp"

#include <ATen/ATen.h>

namespace {

class GraphCheatBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "graph_cheat"; }
  std::string description() const override {
    return "does no work inside a CUDA graph capture (test plugin)";
  }
  attnbench::Support supports(const attnbench::Problem&) const override {
    return attnbench::Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    if (in.q.is_cuda() && attnbench::probe::capturing()) {
      at::Tensor out = at::empty_like(in.q, at::MemoryFormat::Contiguous);
      out.view({-1}).slice(0, 0, 1).fill_(0);  // the one small kernel the graph replays
      return out;
    }
    return attnbench::textbook_attention(in, /*mask_in_place=*/true);
  }
};

}  // namespace

ATTNBENCH_PLUGIN(GraphCheatBackend)
