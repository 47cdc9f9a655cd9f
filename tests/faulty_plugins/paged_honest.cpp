// Test plugin: the honest twin of kv_copy and page_blind: gathers the cache through the page
// table at every call and attends over it in float32. Its rows must read `ok` under every check
// the other two fail.
#include "paged_attend.hpp"

#include <attnbench/plugin.hpp>

namespace {

class PagedHonestBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "paged_honest"; }
  std::string description() const override {
    return "gathers a paged cache through its table at every call (test plugin)";
  }
  std::vector<std::string> variants() const override { return {"ragged", "paged"}; }
  attnbench::Support supports(const attnbench::Problem& p) const override {
    if (!paged_probe::runs(p)) return attnbench::Support::no("packed batches, no variants");
    return attnbench::Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    return paged_probe::attend(in, paged_probe::gathered(in, in.k, /*by_table=*/true),
                               paged_probe::gathered(in, in.v, /*by_table=*/true));
  }
};

}  // namespace

ATTNBENCH_PLUGIN(PagedHonestBackend)
