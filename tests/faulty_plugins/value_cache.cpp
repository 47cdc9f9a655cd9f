// Test plugin: keys a cache on 64 values of each of q, k and v and returns its last output while
// they are unchanged (a tuned backend that skips work it has "seen"). A harness that times
// calls on the same values, or checks only what the first call returned, reads it fast and
// right; every timed call meeting new values makes it compute (or its rows `wrong`).
#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/textbook_attention.hpp>

#include <ATen/ATen.h>

namespace {

class ValueCacheBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "value_cache"; }
  std::string description() const override {
    return "returns its last output while 64 values of each input are unchanged (test plugin)";
  }
  attnbench::Support supports(const attnbench::Problem&) const override {
    return attnbench::Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    auto head = [](at::Tensor t) {  // 64 values from the first rows, without copying the input
      while (t.dim() > 2) t = t.select(0, 0);
      return t.reshape({-1}).slice(0, 0, 64).to(at::kFloat);
    };
    const at::Tensor print = at::cat({head(in.q), head(in.k), head(in.v)});
    if (last_.defined() && last_.sizes() == in.q.sizes() && at::equal(print, print_)) return last_;
    print_ = print;
    last_ = attnbench::textbook_attention(in, /*mask_in_place=*/true);
    return last_;
  }

 private:
  at::Tensor print_, last_;
};

}  // namespace

ATTNBENCH_PLUGIN(ValueCacheBackend)
