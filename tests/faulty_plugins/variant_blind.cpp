// Test plugin: textbook attention that declares every variant and ignores the one named by
// $ATTNBENCH_BLIND_TO (window, softcap, sinks, chunk, fp8_v_scale, rope), as a kernel that takes
// an argument and never applies it (vLLM's prefill that took `sinks`; an MLA kernel that drops the
// rope part; an fp8 cache's v read with k's scale). Its rows at points with that variant must
// read `wrong`, the reason naming the variant; every other row `ok`.
#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/textbook_attention.hpp>

#include <ATen/ATen.h>

#include <cstdlib>
#include <string>

namespace {

class VariantBlindBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "variant_blind"; }
  std::string description() const override {
    return "textbook attention that ignores the variant $ATTNBENCH_BLIND_TO names (test plugin)";
  }
  std::vector<std::string> kinds() const override { return {"attention", "mla"}; }
  std::vector<std::string> variants() const override {
    return {"window", "softcap", "sinks", "chunk", "fp8_kv"};
  }
  attnbench::Support supports(const attnbench::Problem& p) const override {
    if (p.packed() || p.dtype == attnbench::DType::fp8_e4m3)
      return attnbench::Support::no("uniform batches, q in bf16, fp16 or fp32 only");
    return attnbench::Support::yes();
  }
  at::Tensor forward(const attnbench::Inputs& in) override {
    const char* env = std::getenv("ATTNBENCH_BLIND_TO");
    const std::string blind = env ? env : "";
    attnbench::Problem p = in.problem;
    at::Tensor q = in.q, mask;
    const at::Tensor* mask_used = in.mask;
    std::vector<std::pair<std::string, const at::Tensor*>> named;
    if (in.named) named = *in.named;
    double k_scale = in.k_scale, v_scale = in.v_scale;
    if (blind == "softcap") p.softcap = 0;
    if (blind == "sinks") named.clear();
    if (blind == "fp8_v_scale") v_scale = k_scale;
    if (blind == "rope" && p.kind == "mla") {
      q = in.q.clone();
      q.narrow(-1, p.head_dim - p.mla.qk_rope_head_dim, p.mla.qk_rope_head_dim).zero_();
    }
    if ((blind == "window" && p.windowed()) || (blind == "chunk" && p.chunk > 0)) {
      // The causal mask alone (bottom-right), or none.
      mask_used = nullptr;
      if (p.causal) {
        const auto longs = in.q.options().dtype(at::kLong);
        const at::Tensor row = at::arange(p.seq_len, longs).unsqueeze(1);
        const at::Tensor key = at::arange(p.seq_len_kv, longs).unsqueeze(0);
        mask = key > row + (p.seq_len_kv - p.seq_len);
        mask_used = &mask;
      }
    }
    return attnbench::textbook_attention(
        attnbench::Inputs{p, q, in.k, in.v, mask_used, in.scale, in.q_scale, k_scale, v_scale,
                          in.cu_seqlens_q, in.cu_seqlens_kv, in.kv_lens, in.page_table, &named},
        /*mask_in_place=*/false);
  }
};

}  // namespace

ATTNBENCH_PLUGIN(VariantBlindBackend)
