// Test plugin for compare's calibration (tools/compare_calibration.sh): flash on CUDA, the textbook
// attention on the CPU, plus a planted slowdown: the same attention once more on a fraction
// $ATTNBENCH_PLANTED_SLOWDOWN of the heads (0.3: about 30% more work). Unset or 0: no extra work,
// the same backend as its kernel. The output is always the first, complete attention.
#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/forced_sdpa.hpp>
#include <attnbench/sdpa/textbook_attention.hpp>

#include <ATen/ATen.h>

#include <cmath>
#include <cstdlib>
#include <string>

namespace {

double planted_fraction() {
  const char* text = std::getenv("ATTNBENCH_PLANTED_SLOWDOWN");
  return text && *text ? std::stod(text) : 0.0;
}

class PlantedBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "planted"; }
  std::string description() const override {
    return "flash (CUDA) or textbook (CPU) attention plus $ATTNBENCH_PLANTED_SLOWDOWN more work "
           "(test plugin)";
  }
  attnbench::Support supports(const attnbench::Problem& p) const override {
    if (p.kv_heads != p.heads) return attnbench::Support::no("no grouped-query heads");
    return attnbench::Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    const at::Tensor out = attention(in);
    const int64_t extra_heads = std::llround(fraction_ * static_cast<double>(in.q.size(1)));
    if (extra_heads > 0) {
      const at::Tensor q = in.q.narrow(1, 0, extra_heads), k = in.k.narrow(1, 0, extra_heads),
                       v = in.v.narrow(1, 0, extra_heads);
      attention(attnbench::Inputs{in.problem, q, k, v, in.mask, in.scale});
    }
    return out;
  }

 private:
  static at::Tensor attention(const attnbench::Inputs& in) {
    return in.q.is_cuda() ? attnbench::sdpa::forced_attention(attnbench::sdpa::Kernel::flash, in)
                          : attnbench::textbook_attention(in, /*mask_in_place=*/true);
  }
  double fraction_ = planted_fraction();
};

}  // namespace

ATTNBENCH_PLUGIN(PlantedBackend)
