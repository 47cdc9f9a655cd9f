// `mla`: multi-head latent attention (DeepSeek-V2/V3/R1, Kimi K2, GLM-5, Mistral Large 3), its
// fields named as the models' config.json names them. Two forms:
//  - prefill (absorbed: false): q and k of qk_nope_head_dim + qk_rope_head_dim features (192),
//    v of v_head_dim (128), as many kv heads as the sweep writes (the models: one per query head);
//  - absorbed (the decode every serving engine runs): q of kv_lora_rank + qk_rope_head_dim (576,
//    the nope part absorbed into the latent space) against one latent kv head of the same width,
//    whose first kv_lora_rank columns are v (a view of the cache, not a copy); the output has
//    kv_lora_rank features.
// Either way the softmax scale is 1/sqrt(qk_nope_head_dim + qk_rope_head_dim) unless written: the
// absorbed form keeps the scale of the attention it computes, not of its 576-wide dot products.
#include "kinds/list.hpp"
#include "kinds/problem_kind.hpp"

#include <cmath>
#include <string>

namespace attnbench {

namespace {

constexpr const char* kMla = "mla";

Field<Problem> latent_count(std::string name, int64_t MlaShape::*m, std::string id_word,
                            std::string doc) {
  Field<Problem> f;
  f.name = std::move(name);
  f.type = FieldType::integer;
  f.unit = "count";
  f.doc = std::move(doc);
  f.predictable = true;
  f.get = [m](const Problem& p) -> FieldValue { return p.mla.*m; };
  f.set = [m, name = f.name](Problem& p, const FieldValue& v) {
    // Widths are summed into head_dim: bounded well inside int64.
    if (const int64_t* w = std::get_if<int64_t>(&v); w && *w > (int64_t{1} << 16))
      throw std::invalid_argument(name + " is at most 65536 (features of a head), not " +
                                  std::to_string(*w));
    field_detail::from_value(v, p.mla.*m);
  };
  f.id_part = [m, id_word](const Problem& p) { return "-" + id_word + std::to_string(p.mla.*m); };
  return owned_by(kMla, f);
}

}  // namespace

// The latent cache's widths, which DSA (kinds/dsa.cpp) shares: q·k without and with position
// and the latent rank. Defined in the build of what a point is (the LibTorch build links it).
std::vector<Field<Problem>> latent_width_fields();
#ifndef ATTNBENCH_TENSORS
std::vector<Field<Problem>> latent_width_fields() {
  Field<Problem> rank =
      latent_count("kv_lora_rank", &MlaShape::kv_lora_rank, "latent",
                   "mla absorbed, dsa: the latent cache's rank, v's and the output's features (512)");
  rank.applies = [](const Problem& p) { return p.kind != kMla || p.mla.absorbed; };
  rank.applies_to = "the absorbed form's (absorbed: true) and dsa's";
  return {latent_count("qk_nope_head_dim", &MlaShape::qk_nope_head_dim, "nope",
                       "mla, dsa: q·k features without position (DeepSeek-V3: 128)"),
          latent_count("qk_rope_head_dim", &MlaShape::qk_rope_head_dim, "rope",
                       "mla, dsa: q·k features with the rotary position, q's and k's last (64)"),
          rank};
}
#endif

namespace {

class MlaKind final : public ProblemKind {
 public:
  std::string name() const override { return kMla; }
  std::string summary() const override {
    return "multi-head latent attention (DeepSeek-V3, Kimi K2, GLM-5): prefill with q·k of "
           "qk_nope_head_dim + qk_rope_head_dim and v of v_head_dim, or the absorbed decode "
           "against one latent cache of kv_lora_rank + qk_rope_head_dim whose first kv_lora_rank "
           "columns are v";
  }
  std::string id_prefix() const override { return "mla-"; }

  std::vector<Field<Problem>> own_fields() const override {
    Field<Problem> v_dim =
        latent_count("v_head_dim", &MlaShape::v_head_dim, "v",
                     "mla prefill: v's and the output's features (DeepSeek-V3: 128)");
    v_dim.applies = [](const Problem& p) { return !p.mla.absorbed; };
    v_dim.applies_to = "the prefill's (absorbed: false); the absorbed form's v is the latent";
    Field<Problem> absorbed;
    absorbed.name = "absorbed";
    absorbed.type = FieldType::boolean;
    absorbed.doc =
        "mla: true for the absorbed decode (q of kv_lora_rank + rope against one latent kv head, "
        "v its first kv_lora_rank columns); false: prefill";
    absorbed.get = [](const Problem& p) -> FieldValue { return p.mla.absorbed; };
    absorbed.set = [](Problem& p, const FieldValue& v) {
      field_detail::from_value(v, p.mla.absorbed);
    };
    absorbed.id_part = [](const Problem& p) { return p.mla.absorbed ? "-absorbed" : ""; };
    std::vector<Field<Problem>> fields = latent_width_fields();
    fields.insert(fields.begin() + 2, v_dim);  // the columns' order: nope, rope, v, latent
    fields.push_back(owned_by(kMla, absorbed));
    return fields;
  }
  std::vector<std::string> derived_axes() const override { return {"head_dim"}; }

  void complete(Problem& p) const override {
    const MlaShape& m = p.mla;
    if (m.absorbed) {
      p.head_dim = m.kv_lora_rank + m.qk_rope_head_dim;
      p.head_dim_v = m.kv_lora_rank;
      p.v_in_k = true;
      if (p.kv_heads == 0) p.kv_heads = 1;  // one latent head, whatever `heads` is
    } else {
      p.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
      p.head_dim_v = m.v_head_dim;
      p.v_in_k = false;
    }
    if (p.scale == 0) p.scale = default_scale(p);
  }
  double default_scale(const Problem& p) const override {
    return 1.0 / std::sqrt(static_cast<double>(p.mla.qk_nope_head_dim + p.mla.qk_rope_head_dim));
  }
  std::optional<FieldRefusal> refuse(const Problem& p) const override {
    if (p.mla.absorbed && p.kv_heads != 1)
      return FieldRefusal{"kv_heads",
                          "the absorbed form attends over one latent kv head shared "
                          "by every query head: kv_heads 1 (or leave it out)"};
    if (p.mla.absorbed && p.direction == Direction::bwd)
      return FieldRefusal{"direction",
                          "the absorbed form is how engines decode; k and v are one "
                          "cache there, so it has no backward of its own (the "
                          "prefill form has: absorbed false)"};
    return std::nullopt;
  }
};

}  // namespace

}  // namespace attnbench

#ifdef ATTNBENCH_TENSORS
#include "kinds/tensors.hpp"

namespace attnbench {
namespace {
// Attention over its widths (v inside k when absorbed): the defaults' dense reference. Its rope
// part is a variant of its own (kinds/variants/rope.cpp).
class MlaTensors final : public KindTensors {};
}  // namespace
}  // namespace attnbench
#endif

namespace attnbench {
ATTNBENCH_KIND(mla, MlaKind, MlaTensors)
}  // namespace attnbench
