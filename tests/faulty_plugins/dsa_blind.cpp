// Test plugin: DeepSeek's sparse attention that misreads its indices, as $ATTNBENCH_DSA_MISREAD
// says: `ignore` attends over every token each query sees (as a dense kernel handed the indices
// would), `late` and `early` read each selected token's neighbour (an index one off, in either
// direction). The textbook gather otherwise, on the CPU and the GPU: every row must read `wrong`,
// naming what it misread; unset, it is right.
#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/textbook_attention.hpp>

#include <ATen/ATen.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace {

class DsaBlindBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "dsa_blind"; }
  std::string description() const override {
    return "textbook sparse attention that misreads its indices ($ATTNBENCH_DSA_MISREAD: ignore, "
           "late, early; test plugin)";
  }
  std::vector<std::string> kinds() const override { return {"dsa"}; }
  std::vector<std::string> variants() const override { return {"ragged", "paged", "fp8_kv"}; }
  attnbench::Support supports(const attnbench::Problem&) const override {
    return attnbench::Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    const char* env = std::getenv("ATTNBENCH_DSA_MISREAD");
    const std::string misread = env ? env : "";
    const at::Tensor& given = *in.input("indices");
    const at::Tensor rows = given.reshape({-1, given.size(-1)}).to(at::kLong);
    // Each row's position in its sequence, from the problem's lengths (bottom-right).
    const attnbench::Problem& p = in.problem;
    std::vector<int64_t> positions;
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t i = 0; i < p.q_len(b); ++i) positions.push_back(p.kv_len(b) - p.q_len(b) + i);
    const at::Tensor pos = at::tensor(positions, at::kLong).to(rows.device()).unsqueeze(1);
    at::Tensor indices;
    if (misread == "ignore") {  // every token the query sees, in order, -1 after
      const at::Tensor all = at::arange(p.seq_len_kv, rows.options()).unsqueeze(0);
      indices = at::where(all <= pos, all, at::full_like(all, -1));
    } else if (misread == "late" || misread == "early") {
      const int64_t by = misread == "late" ? 1 : -1;
      indices = at::where(rows >= 0, (rows + by).clamp(0).minimum(pos), rows);
    } else {
      indices = rows;
    }
    const at::Tensor shaped = indices.to(at::kInt);
    std::vector<std::pair<std::string, const at::Tensor*>> named = {{"indices", &shaped}};
    attnbench::Inputs misreading = in;
    misreading.named = &named;
    return attnbench::textbook_attention(misreading, /*mask_in_place=*/false);
  }
};

}  // namespace

ATTNBENCH_PLUGIN(DsaBlindBackend)
