// Test plugin: computes the first and the last sequence of the batch only and leaves the others
// zero (a kernel whose grid misses blocks). A check that reads a few fixed rows of batches 0 and
// B-1 passes it; the whole output checked makes its rows `wrong`.
#include <attnbench/plugin.hpp>

#include <ATen/ATen.h>

namespace {

class PartialBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "partial"; }
  std::string description() const override {
    return "computes the first and last sequence only, zeros elsewhere (test plugin)";
  }
  attnbench::Support supports(const attnbench::Problem& p) const override {
    if (p.packed() || p.heads != p.kv_heads || p.seq_len != p.seq_len_kv || p.windowed() ||
        p.softcap > 0)
      return attnbench::Support::no("dense batches with as many kv heads as query heads only");
    return attnbench::Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    at::Tensor out = at::zeros_like(in.q);
    const bool causal = in.problem.causal;
    for (int64_t b : {int64_t{0}, in.q.size(0) - 1}) {
      const auto one = [b](const at::Tensor& t) { return t.slice(0, b, b + 1); };
      one(out).copy_(at::scaled_dot_product_attention(one(in.q), one(in.k), one(in.v), {}, 0.0,
                                                      causal, in.scale));
    }
    return out;
  }
};

}  // namespace

ATTNBENCH_PLUGIN(PartialBackend)
