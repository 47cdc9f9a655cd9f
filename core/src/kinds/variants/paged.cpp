// `paged`: k and v as caches of pages read through a page table (kv_layout, page_size, page_order:
// common fields), the layout serving engines keep their KV caches in.
#include "kinds/list.hpp"
#include "kinds/variant.hpp"

namespace attnbench {

namespace {

class Paged final : public ProblemVariant {
 public:
  std::string name() const override { return "paged"; }
  std::string words() const override { return "a paged KV cache"; }
  std::string summary() const override {
    return "k and v as pages of page_size tokens read through a page table (kv_layout: paged)";
  }
  bool present(const Problem& p) const override { return p.paged(); }
  bool in_abi4() const override { return true; }
  std::vector<std::string> python_needs() const override {
    return {"cu_seqlens_q", "page_table"};
  }
  // Its check is the correctness pass's scattered table (scatter_pages()), every kind's alike.
  std::vector<std::string> check_names() const override { return {}; }
};

}  // namespace

}  // namespace attnbench

#ifdef ATTNBENCH_TENSORS
#include "kinds/tensors.hpp"

namespace attnbench {
namespace {
class PagedTensors final : public VariantTensors {
 public:
  std::vector<PointVariant> without(const InputTensors&) const override { return {}; }
};
}  // namespace
}  // namespace attnbench
#endif

namespace attnbench {
ATTNBENCH_VARIANT(paged, Paged, PagedTensors)
}  // namespace attnbench
