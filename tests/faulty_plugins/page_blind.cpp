// Test plugin: a paged-decode backend that never reads the page table: it takes sequence b's
// pages to be the ones after sequence b-1's, as they are in a table filled in order (issue 45: `ok`
// at 6 of 6 in-order rows, 1.45-1.56x faster than FlashInfer). Checked with the table scattered,
// it is `wrong` whatever order it is timed with.
#include "paged_attend.hpp"

#include <attnbench/plugin.hpp>

namespace {

class PageBlindBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "page_blind"; }
  std::string description() const override {
    return "reads a paged cache as if its pages were in order, the table unread (test plugin)";
  }
  std::vector<std::string> variants() const override { return {"ragged", "paged"}; }
  attnbench::Support supports(const attnbench::Problem& p) const override {
    if (!paged_probe::runs(p)) return attnbench::Support::no("packed batches, no variants");
    return attnbench::Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    return paged_probe::attend(in, paged_probe::gathered(in, in.k, /*by_table=*/false),
                               paged_probe::gathered(in, in.v, /*by_table=*/false));
  }
};

}  // namespace

ATTNBENCH_PLUGIN(PageBlindBackend)
