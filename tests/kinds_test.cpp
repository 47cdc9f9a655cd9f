// Problem kinds on the CPU, without LibTorch: the kinds' fields as sweep keys (and refused on
// another kind's points, at their line), what MLA derives, the scale axis, the point id read off
// the kinds' field tables (every axis of every kind changes it; the ids attention always had are
// kept), and the work model of each kind computed by hand.
#include "base/errors.hpp"
#include "kinds/problem_kind.hpp"
#include "kinds/problem.hpp"
#include "config/config.hpp"
#include "config/sweep.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

namespace attnbench {
namespace {

Problem only_point(const std::string& yaml) {
  const std::vector<Point> points = expand_sweep(parse_config(yaml, "k.yaml"), false);
  EXPECT_EQ(points.size(), 1u) << yaml;
  return points.at(0).problem;
}

// The error a sweep gets: its key, its line, and a piece of its message.
void expect_refused(const std::string& yaml, const std::string& key, int line,
                    const std::string& says) {
  try {
    parse_config(yaml, "k.yaml");
    ADD_FAILURE() << "accepted:\n" << yaml;
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), key) << e.what();
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

TEST(Kinds, TheListHasAttentionFirstThenMla) {
  ASSERT_GE(problem_kinds().size(), 2u);
  EXPECT_EQ(problem_kinds()[0]->name(), "attention");
  EXPECT_EQ(problem_kinds()[1]->name(), "mla");
  EXPECT_EQ(find_problem_kind("mla"), problem_kinds()[1]);
  EXPECT_EQ(find_problem_kind("gqa"), nullptr);
  Problem p;
  p.kind = "gqa";
  EXPECT_THROW(kind_of(p), std::invalid_argument);
}

TEST(Kinds, ASweepWithoutAKindIsAttentionWithItsDefaultScale) {
  const Problem p = only_point("sweep:\n  seq_len: 8\n  head_dim: 16\n");
  EXPECT_EQ(p.kind, "attention");
  EXPECT_EQ(p.head_dim_v, 16);
  EXPECT_FALSE(p.v_in_k);
  EXPECT_DOUBLE_EQ(p.scale, 0.25);
}

TEST(Kinds, MlaPrefillDerivesItsWidthsAndScaleFromItsOwnFields) {
  const Problem p = only_point(
      "sweep:\n  kind: mla\n  heads: 4\n  seq_len: 8\n  qk_nope_head_dim: 32\n"
      "  qk_rope_head_dim: 16\n  v_head_dim: 24\n");
  EXPECT_EQ(p.kind, "mla");
  EXPECT_EQ(p.head_dim, 48);  // nope + rope
  EXPECT_EQ(p.head_dim_v, 24);
  EXPECT_FALSE(p.v_in_k);
  EXPECT_EQ(p.kv_heads, 4);  // as many as query heads unless written
  EXPECT_DOUBLE_EQ(p.scale, 1 / std::sqrt(48.0));
}

TEST(Kinds, MlaAbsorbedIsOneLatentHeadWhoseFirstColumnsAreV) {
  const Problem p = only_point(
      "sweep:\n  kind: mla\n  absorbed: true\n  heads: 16\n  seq_len: 1\n  seq_len_kv: 64\n");
  EXPECT_EQ(p.head_dim, 512 + 64);  // DeepSeek-V3's defaults
  EXPECT_EQ(p.head_dim_v, 512);
  EXPECT_TRUE(p.v_in_k);
  EXPECT_EQ(p.kv_heads, 1);
  // The scale of the attention it computes, 1/sqrt(128 + 64), not of its 576-wide dot products.
  EXPECT_DOUBLE_EQ(p.scale, 1 / std::sqrt(192.0));
  EXPECT_NE(p.scale, 1 / std::sqrt(576.0));
  // The rank and the rope width each move both widths; the nope width only the scale.
  const Problem q = only_point(
      "sweep:\n  kind: mla\n  absorbed: true\n  seq_len: 1\n  kv_lora_rank: 256\n"
      "  qk_rope_head_dim: 32\n  qk_nope_head_dim: 96\n");
  EXPECT_EQ(q.head_dim, 288);
  EXPECT_EQ(q.head_dim_v, 256);
  EXPECT_DOUBLE_EQ(q.scale, 1 / std::sqrt(128.0));
}

TEST(Kinds, AWrittenScaleIsKeptForEveryKind) {
  for (const char* kind : {"attention", "mla"}) {
    const Problem p =
        only_point(std::string("sweep:\n  kind: ") + kind + "\n  seq_len: 8\n  scale: 0.0625\n");
    EXPECT_DOUBLE_EQ(p.scale, 0.0625) << kind;
    EXPECT_NE(point_id(p).find("-scale0.0625"), std::string::npos) << point_id(p);
  }
  // Gemma 3's: 1/sqrt(168) with head_dim 128.
  EXPECT_DOUBLE_EQ(
      only_point("sweep:\n  seq_len: 8\n  head_dim: 128\n  scale: 0.07715167498104596\n").scale,
      1 / std::sqrt(168.0));
  // A scale equal to the kind's default is no part of the id: the same point as leaving it out.
  EXPECT_EQ(point_id(only_point("sweep:\n  seq_len: 8\n  head_dim: 16\n  scale: 0.25\n")),
            point_id(only_point("sweep:\n  seq_len: 8\n  head_dim: 16\n")));
}

// A problem made in code (a plugin's test, the bridge) has scale 0, "the kind's default": no part.
TEST(Kinds, AScaleOfZeroIsTheDefaultAndNoPartOfTheId) {
  Problem p;
  p.head_dim = 64;
  EXPECT_EQ(p.scale, 0);
  EXPECT_EQ(point_id(p), "b1-h1-s1-d64-bf16-full-cpu");
  p.scale = 0.125;  // 1/sqrt(64): the default, written
  EXPECT_EQ(point_id(p), "b1-h1-s1-d64-bf16-full-cpu");
  p.scale = 0.25;
  EXPECT_EQ(point_id(p), "b1-h1-s1-d64-bf16-full-cpu-scale0.25");
}

TEST(Kinds, AScaleOfZeroOrBelowIsRefusedAtItsKey) {
  expect_refused("sweep:\n  seq_len: 8\n  scale: 0\n", "sweep.scale", 3, "greater than 0, got 0");
  expect_refused("sweep:\n  seq_len: 8\n  scale: -0.5\n", "sweep.scale", 3,
                 "greater than 0, got -0.5");
}

TEST(Kinds, AnotherKindsFieldIsRefusedAtItsLine) {
  expect_refused("sweep:\n  kind: mla\n  seq_len: 8\n  window: [4, 0]\n", "sweep.window", 4,
                 "window is a field of kind attention, not of mla");
  expect_refused("sweep:\n  kind: mla\n  seq_len: 8\n  softcap: 30\n", "sweep.softcap", 4,
                 "softcap is a field of kind attention");
  // MLA's latent widths are DSA's too (one field of two kinds); v's width and absorbed MLA's own.
  for (const auto& [own, owners] : {std::pair{"qk_nope_head_dim: 64", "mla and dsa"},
                                    {"qk_rope_head_dim: 32", "mla and dsa"},
                                    {"v_head_dim: 64", "mla"},
                                    {"kv_lora_rank: 256", "mla and dsa"},
                                    {"absorbed: true", "mla"}}) {
    const std::string name = std::string(own).substr(0, std::string(own).find(':'));
    expect_refused("sweep:\n  seq_len: 8\n  " + std::string(own) + "\n", "sweep." + name, 3,
                   name + " is a field of kind " + owners + ", not of attention");
  }
}

// The rule reads every axis of a block: the free ones and those of its zip groups.
TEST(Kinds, AnotherKindsFieldInAZipGroupIsRefusedAtItsKey) {
  expect_refused("sweep:\n  seq_len: 8\n  zip:\n    - heads: [2, 4]\n      qk_nope_head_dim: [64, 128]\n",
                 "sweep.zip[0].qk_nope_head_dim", 5, "qk_nope_head_dim is a field of kind mla");
  expect_refused("sweep:\n  kind: mla\n  seq_len: 8\n  zip:\n    - heads: [2, 4]\n      window: [[4, 0], [8, 0]]\n",
                 "sweep.zip[0].window", 6, "window is a field of kind attention");
}

TEST(Kinds, WhatMlaDerivesCannotBeWritten) {
  expect_refused("sweep:\n  kind: mla\n  seq_len: 8\n  head_dim: 192\n", "sweep.head_dim", 4,
                 "kind mla derives head_dim from its own fields");
  // Derived columns are no sweep keys at all.
  for (const char* derived : {"head_dim_v: 64", "v_in_k: true"})
    EXPECT_THROW(parse_config("sweep:\n  seq_len: 8\n  " + std::string(derived) + "\n", "k.yaml"),
                 ConfigError)
        << derived;
}

TEST(Kinds, MlaRefusesWhatItsAbsorbedFormCannotBe) {
  expect_refused(
      "sweep:\n  kind: mla\n  absorbed: true\n  heads: 16\n  seq_len: 1\n  kv_heads: 2\n",
      "sweep.kv_heads", 6, "one latent kv head");
  expect_refused("sweep:\n  kind: mla\n  absorbed: true\n  seq_len: 1\n  direction: bwd\n",
                 "sweep.direction", 5, "no backward");
  // kv_heads 1 written is the same point as left out; the prefill form takes other counts and a
  // backward.
  EXPECT_EQ(
      only_point("sweep:\n  kind: mla\n  absorbed: true\n  seq_len: 1\n  kv_heads: 1\n").kv_heads,
      1);
  EXPECT_EQ(only_point("sweep:\n  kind: mla\n  heads: 4\n  kv_heads: 2\n  seq_len: 8\n"
                       "  direction: bwd\n")
                .kv_heads,
            2);
}

// kv_dtype: a cache of another dtype than q's is fp8_e4m3, under bf16 or fp16 queries, forward
// only; each refusal at its key and line, for each kind.
TEST(Kinds, AnFp8CacheIsRefusedWhereItCannotBe) {
  for (const char* kind : {"attention", "mla"}) {
    const std::string head = std::string("sweep:\n  kind: ") + kind + "\n  seq_len: 8\n";
    expect_refused(head + "  dtype: bf16\n  kv_dtype: fp16\n", "sweep.kv_dtype", 5,
                   "kv_dtype fp16 under dtype bf16");
    expect_refused(head + "  dtype: fp16\n  kv_dtype: bf16\n", "sweep.kv_dtype", 5,
                   "kv_dtype bf16 under dtype fp16");
    expect_refused(head + "  dtype: fp32\n  kv_dtype: fp8_e4m3\n", "sweep.kv_dtype", 5,
                   "under bf16 or fp16 queries, not fp32");
    expect_refused(head + "  kv_dtype: fp8_e4m3\n  direction: bwd\n", "sweep.direction", 5,
                   "forward pass only");
    for (const char* dtype : {"bf16", "fp16"}) {
      const Problem p = only_point(head + "  dtype: " + dtype + "\n  kv_dtype: fp8_e4m3\n");
      EXPECT_TRUE(p.fp8_kv()) << kind << " " << dtype;
      EXPECT_EQ(p.variant_names(), std::vector<std::string>{"fp8_kv"}) << kind << " " << dtype;
    }
    // The cache of q's dtype written is the point without kv_dtype: one id, no variant.
    for (const char* dtype : {"bf16", "fp16", "fp32", "fp8_e4m3"}) {
      const Problem same =
          only_point(head + "  dtype: " + dtype + "\n  kv_dtype: " + dtype + "\n");
      EXPECT_FALSE(same.fp8_kv()) << kind << " " << dtype;
      EXPECT_EQ(point_id(same), point_id(only_point(head + "  dtype: " + dtype + "\n")))
          << kind << " " << dtype;
    }
  }
  EXPECT_EQ(point_id(only_point("sweep:\n  seq_len: 8\n  kv_dtype: fp8_e4m3\n")),
            "b1-h1-s8-d64-bf16-kvfp8_e4m3-causal-cpu");
}

TEST(Kinds, AnUnknownKindNamesTheKinds) {
  expect_refused("sweep:\n  kind: gqa\n  seq_len: 8\n", "sweep.kind", 2,
                 "attention, mla, dsa, dsa_indexer, gdn or kda");
}

TEST(Kinds, AttentionIdsAreTheOnesReportsAlwaysHad) {
  EXPECT_EQ(
      point_id(only_point("sweep:\n  batch: 4\n  heads: 16\n  seq_len: 2048\n  device: cuda\n")),
      "b4-h16-s2048-d64-bf16-causal-cuda");
  EXPECT_EQ(
      point_id(only_point("sweep:\n  heads: 32\n  kv_heads: 8\n  seq_len: 1\n  seq_len_kv: 131072\n"
                          "  head_dim: 128\n  causal: false\n  device: cuda\n")),
      "b1-h32-kv8-s1-skv131072-d128-bf16-full-cuda");
  EXPECT_EQ(point_id(only_point("sweep:\n  batch: 8\n  heads: 16\n  seq_len: 2048\n  device: cuda\n"
                                "  direction: bwd\n")),
            "b8-h16-s2048-d64-bf16-causal-cuda-bwd");
  EXPECT_EQ(point_id(only_point("sweep:\n  seq_len: 1\n  seq_len_kv: 64\n  kv_layout: paged\n"
                                "  page_size: 16\n  page_order: shuffled\n  window: [31, 0]\n"
                                "  softcap: 50\n  device: cpu\n")),
            "b1-h1-s1-skv64-d64-bf16-causal-cpu-paged16-shuffled-win31_0-cap50");
}

// attention's window rule and id part at their edges: a window that looks ahead is refused only
// under causal; one unbounded side is still a window.
TEST(Kinds, AttentionsWindowAtItsEdges) {
  EXPECT_EQ(point_id(only_point("sweep:\n  seq_len: 8\n  causal: false\n  window: [4, 4]\n  device: cpu\n")),
            "b1-h1-s8-d64-bf16-full-cpu-win4_4");
  expect_refused("sweep:\n  seq_len: 8\n  window: [4, 4]\n", "sweep.window", 3,
                 "a causal mask sees no key ahead");
  EXPECT_EQ(point_id(only_point("sweep:\n  seq_len: 8\n  window: [4, 0]\n  device: cpu\n")),
            "b1-h1-s8-d64-bf16-causal-cpu-win4_0");  // RIGHT 0 under causal: allowed
  EXPECT_EQ(point_id(only_point("sweep:\n  seq_len: 8\n  causal: false\n  window: [-1, 0]\n  device: cpu\n")),
            "b1-h1-s8-d64-bf16-full-cpu-win-1_0");
  EXPECT_EQ(point_id(only_point("sweep:\n  seq_len: 8\n  causal: false\n  window: [3, -1]\n  device: cpu\n")),
            "b1-h1-s8-d64-bf16-full-cpu-win3_-1");
}

// attention's own fields at their limits: window edges up to 1e9 keys, a window that leaves no
// key to some query (more queries than keys, bounded on the right), a softcap past the dtype.
TEST(Kinds, AttentionsFieldsAtTheirLimits) {
  EXPECT_NO_THROW(parse_config("sweep:\n  seq_len: 8\n  causal: false\n  window: [1000000000, 0]\n", "k.yaml"));
  expect_refused("sweep:\n  seq_len: 8\n  causal: false\n  window: [1000000001, 0]\n",
                 "sweep.window", 4, "up to 1e9");
  expect_refused("sweep:\n  seq_len: 8\n  causal: false\n  window: [0, 9223372036854775807]\n",
                 "sweep.window", 4, "up to 1e9");
  // 10 queries, 4 keys: the first 10 - 4 - RIGHT queries see none; RIGHT 6 is the least that works.
  expect_refused("sweep:\n  seq_len: 10\n  seq_len_kv: 4\n  causal: false\n  window: [2, 5]\n",
                 "sweep.window", 5, "the first 1 queries see no key");
  EXPECT_NO_THROW(parse_config("sweep:\n  seq_len: 10\n  seq_len_kv: 4\n  causal: false\n  window: [2, 6]\n", "k.yaml"));
  EXPECT_NO_THROW(parse_config("sweep:\n  seq_len: 10\n  seq_len_kv: 4\n  causal: false\n  window: [2, -1]\n", "k.yaml"));
  // A ragged batch: the sequence with too few keys is named.
  expect_refused("sweep:\n  batch: 2\n  causal: false\n  seq_lens: [\"4,9\"]\n"
                 "  seq_lens_kv: [\"4,5\"]\n  window: [2, 3]\n",
                 "sweep.window", 6, "with 9 queries and 5 keys (sequence 1) the first 1 queries");
  expect_refused("sweep:\n  seq_len: 8\n  dtype: fp32\n  softcap: 1e300\n", "sweep.softcap", 4,
                 "past the largest number of fp32");
  EXPECT_NO_THROW(parse_config("sweep:\n  seq_len: 8\n  dtype: fp16\n  softcap: 65504\n", "k.yaml"));
  expect_refused("sweep:\n  seq_len: 8\n  dtype: fp16\n  softcap: 65505\n", "sweep.softcap", 4,
                 "past the largest number of fp16");
}

// A uniform batch's tokens are bounded up front, at int32's count; the equality edge runs.
TEST(Kinds, AUniformBatchPastInt32TokensIsRefusedAtBatch) {
  expect_refused("sweep:\n  batch: 1099511627776\n  seq_len: 64\n", "sweep.batch", 2,
                 "past 2147483647");
  expect_refused("sweep:\n  batch: 2147483648\n  seq_len: 1\n", "sweep.batch", 2,
                 "past 2147483647");
  const Problem p = only_point("sweep:\n  batch: 2147483647\n  seq_len: 1\n");
  EXPECT_EQ(total_q_tokens(p), 2147483647);
  EXPECT_DOUBLE_EQ(point_bytes(p), 2147483647.0 * 64 * 2 * 2 + 2147483647.0 * 64 * 2 * 2);
}

TEST(Kinds, MlaIdsStartWithTheKindAndNameItsWidths) {
  EXPECT_EQ(
      point_id(only_point("sweep:\n  kind: mla\n  heads: 128\n  seq_len: 4096\n  device: cuda\n")),
      "mla-b1-h128-s4096-bf16-causal-cuda-nope128-rope64-v128");
  EXPECT_EQ(
      point_id(only_point("sweep:\n  kind: mla\n  absorbed: true\n  batch: 64\n  heads: 16\n"
                          "  seq_len: 1\n  seq_len_kv: 8192\n  kv_layout: paged\n  page_size: 64\n"
                          "  device: cuda\n")),
      "mla-b64-h16-kv1-s1-skv8192-bf16-causal-cuda-paged64-nope128-rope64-latent512-absorbed");
}

// A value of `f` other than the one `p` has, as a sweep would write it.
std::string other_value(const Field<Problem>& f, const Problem& p) {
  const FieldValue now = f.get(p);
  switch (f.type) {
    case FieldType::integer: {  // twice as many; half the kv heads and queries (they bound)
      const int64_t n = std::get<int64_t>(now);
      return std::to_string(f.name == "kv_heads" || f.name == "seq_len" ? n / 2 : n * 2);
    }
    case FieldType::boolean: return std::get<bool>(now) ? "false" : "true";
    case FieldType::number: return std::get<double>(now) == 0.5 ? "0.25" : "0.5";
    case FieldType::choice:
      for (const std::string& c : f.choices)
        if (FieldValue(c) != now) return c;
      return "";
    case FieldType::text:
      if (f.name == "window") return "[3, 0]";
      if (f.name == "seq_lens") return "\"uniform(5,7)\"";
      if (f.name == "seq_lens_kv") return "\"uniform(9,12)\"";
      if (f.name == "index_pattern") return std::get<std::string>(now) == "recent" ? "uniform" : "recent";
      if (f.name == "state_dtype") return std::get<std::string>(now) == "bf16" ? "fp32" : "bf16";
      return "";
    default: return "";
  }
}

// A point with every axis of a kind written, and the axes it must keep (another value there is
// a point the sweep refuses, checked in another base).
struct Base {
  std::string kind, yaml;
  std::set<std::string> fixed;
};

const char* kPackedAxes =
    "  batch: 3\n  heads: 4\n  seq_lens: \"uniform(6,8)\"\n  seq_lens_kv: \"uniform(8,10)\"\n"
    "  dtype: fp16\n  causal: true\n  device: cpu\n  direction: fwd\n  kv_layout: paged\n"
    "  page_size: 4\n  page_order: in_order\n  scale: 0.125\n";
const char* kUniformAxes =
    "  heads: 4\n  seq_len: 6\n  seq_len_kv: 8\n  kv_layout: contiguous\n  device: cpu\n";

// Every axis of every kind, changed alone from a point where it matters, changes the point id:
// an axis left out of its id would make two points one row (which the sweep refuses, below).
TEST(Kinds, EveryAxisOfEveryKindChangesThePointId) {
  // Each form's own widths (v's is the prefill's, the latent rank the absorbed form's).
  const std::string mla_own = "  qk_nope_head_dim: 8\n  qk_rope_head_dim: 4\n  v_head_dim: 6\n";
  const std::string mla_absorbed_own =
      "  qk_nope_head_dim: 8\n  qk_rope_head_dim: 4\n  kv_lora_rank: 16\n";
  const std::vector<Base> bases = {
      {"attention",
       std::string(kPackedAxes) +
           "  kv_heads: 4\n  head_dim: 16\n  window: [5, 0]\n  softcap: 20\n",
       {"kv_layout"}},
      {"attention", std::string(kUniformAxes) + "  head_dim: 16\n  sinks: true\n  chunk: 4\n", {}},
      // An fp8 cache under fp16 queries: its forward only, kv_dtype's other value q's own.
      {"attention",
       std::string(kUniformAxes) + "  head_dim: 16\n  dtype: fp16\n  kv_dtype: fp8_e4m3\n",
       {}},
      {"mla",
       std::string(kPackedAxes) + "  kv_heads: 4\n" + mla_own + "  absorbed: false\n",
       {"kv_layout", "absorbed"}},  // absorbed with 4 kv heads is refused: the next base has it
      {"mla",
       std::string(kPackedAxes) + "  kv_heads: 1\n" + mla_absorbed_own + "  absorbed: true\n",
       {"kv_layout", "kv_heads", "direction", "absorbed"}},  // the latent rank is the absorbed's
      // absorbed changed alone, with only the widths both forms have written.
      {"mla",
       std::string(kUniformAxes) +
           "  kv_heads: 1\n  qk_nope_head_dim: 8\n  qk_rope_head_dim: 4\n  absorbed: true\n",
       {"kv_heads"}},
      {"mla", std::string(kUniformAxes) + mla_own, {}},
      {"mla", std::string(kUniformAxes) + mla_own + "  dtype: fp16\n  kv_dtype: fp8_e4m3\n", {}},
      // DSA: causal and forward, its own (derived); mla's widths but v's, its top-k and pattern.
      {"dsa",
       "  batch: 3\n  heads: 4\n  seq_lens: \"uniform(6,8)\"\n  seq_lens_kv: \"uniform(8,10)\"\n"
       "  dtype: fp16\n  device: cpu\n  kv_layout: paged\n  page_size: 4\n  page_order: in_order\n"
       "  scale: 0.125\n  qk_nope_head_dim: 8\n  qk_rope_head_dim: 4\n  kv_lora_rank: 16\n"
       "  index_topk: 8\n  index_pattern: recent\n",
       {"kv_layout"}},
      {"dsa",
       std::string(kUniformAxes) +
           "  qk_nope_head_dim: 8\n  qk_rope_head_dim: 4\n  kv_lora_rank: 16\n  dtype: fp16\n"
           "  kv_dtype: fp8_e4m3\n",
       {}},
      // DSA's indexer: causal, forward, one index key a token and its cache's dtype, its own.
      {"dsa_indexer",
       "  batch: 3\n  heads: 4\n  seq_lens: \"uniform(6,8)\"\n  seq_lens_kv: \"uniform(8,10)\"\n"
       "  dtype: fp16\n  device: cpu\n  kv_layout: paged\n  page_size: 4\n  page_order: in_order\n"
       "  scale: 0.125\n  head_dim: 16\n  index_topk: 8\n",
       {"kv_layout"}},
      {"dsa_indexer", std::string(kUniformAxes) + "  head_dim: 16\n", {}},
      // The linear kinds: no cache, heads from their own fields (GDN's value heads a multiple of
      // its key heads: doubling either keeps that), a bf16 state, a chunk of 32.
      {"gdn",
       "  batch: 3\n  seq_lens: \"uniform(6,8)\"\n  dtype: fp16\n  device: cpu\n  scale: 0.125\n"
       "  linear_num_key_heads: 2\n  linear_num_value_heads: 8\n  linear_key_head_dim: 16\n"
       "  linear_value_head_dim: 8\n  state_dtype: bf16\n  chunk_size: 32\n",
       {}},
      {"gdn", "  seq_len: 6\n  device: cpu\n", {}},
      {"kda",
       "  batch: 3\n  seq_lens: \"uniform(6,8)\"\n  dtype: fp16\n  device: cpu\n  scale: 0.125\n"
       "  linear_num_key_heads: 2\n  linear_key_head_dim: 16\n  linear_value_head_dim: 8\n"
       "  state_dtype: fp32\n  chunk_size: 64\n",
       {}},
      {"kda", "  seq_len: 6\n  device: cpu\n", {}},
  };
  std::map<std::string, std::set<std::string>> checked;
  for (const Base& base : bases) {
    const std::string yaml = "sweep:\n  kind: " + base.kind + "\n" + base.yaml;
    const Problem p = only_point(yaml);
    const ProblemKind& kind = kind_of(p);
    for (const auto& f : problem_fields()) {
      const size_t at = yaml.find("  " + f.name + ": ");
      if (!kind_has_axis(kind, f) || f.name == "kind" || base.fixed.count(f.name) ||
          at == std::string::npos || (f.applies && !f.applies(p)))
        continue;
      const std::string value = other_value(f, p);
      ASSERT_FALSE(value.empty()) << f.name;
      std::string changed = yaml;
      changed.replace(at, changed.find('\n', at) - at, "  " + f.name + ": " + value);
      EXPECT_NE(point_id(only_point(changed)), point_id(p))
          << base.kind << ": " << f.name << " -> " << value << " in\n"
          << yaml;
      checked[base.kind].insert(f.name);
    }
  }
  for (const ProblemKind* kind : problem_kinds())
    for (const auto& f : problem_fields())
      if (kind_has_axis(*kind, f) && f.name != "kind")
        EXPECT_TRUE(checked[kind->name()].count(f.name)) << kind->name() << "'s " << f.name;
}

// Two length specs that draw different batches never share a point id: lists, mixes of counted
// parts (a mix 2*32 + 2*1 is not the list 2,32,2,1), distributions and files, generated in every
// combination and compared pairwise.
TEST(Kinds, DifferentLengthSpecsGiveDifferentIds) {
  std::vector<std::string> specs;
  const std::vector<std::string> numbers = {"1", "2", "32", "321", "1024"};
  for (const auto& a : numbers)
    for (const auto& b : numbers) {
      specs.push_back(a + "," + b);
      specs.push_back(a + "*" + b);
      specs.push_back(a + "*" + b + " + " + b + "*" + a);
      specs.push_back("uniform(" + a + "," + b + ")");
      specs.push_back("normal(" + a + "," + b + ")");
      specs.push_back(a + "*uniform(" + b + "," + a + ")");
      for (const auto& c : numbers) {
        specs.push_back(a + "," + b + "," + c);
        specs.push_back(a + "*" + b + " + " + c + "*1");
        specs.push_back(a + "," + b + "," + c + ",1");
      }
    }
  for (const char* file : {"histogram(a.csv)", "histogram(a+b.csv)", "histogram(2*3.csv)",
                           "histogram(a-b.csv)", "histogram(a_b.csv)", "histogram(a,b.csv)"}) {
    specs.push_back(file);
    specs.push_back(std::string("4*") + file + " + 4*16");  // a file inside a mix
  }
  // A number's exponent inside a distribution: its sign is the number's.
  for (const char* spec : {"normal(1000,2e+1,1000)", "normal(1000,2e-1,1000)", "normal(1e+3,100)",
                           "normal(1e-3,100)", "2*normal(1e+2,10) + 2*1", "2*normal(1e-2,10) + 2*1"})
    specs.push_back(spec);
  std::sort(specs.begin(), specs.end());
  specs.erase(std::unique(specs.begin(), specs.end()), specs.end());
  std::map<std::string, std::string> seen;  // id -> the spec that gave it
  for (const std::string& spec : specs) {
    Problem p;
    p.seq_lens = spec;
    p.q_lens = {1};  // ragged: the spec's id part counts
    const std::string id = point_id(p);
    const auto [at, added] = seen.emplace(id, spec);
    EXPECT_TRUE(added) << "'" << spec << "' and '" << at->second << "' share the id " << id;
  }
  EXPECT_GT(seen.size(), 400u);
}

TEST(Kinds, TheKindChangesTheIdOfTheSameFields) {
  const Problem a = only_point("sweep:\n  seq_len: 8\n  heads: 2\n");
  const Problem m = only_point("sweep:\n  kind: mla\n  seq_len: 8\n  heads: 2\n");
  EXPECT_NE(point_id(a), point_id(m));
  EXPECT_EQ(point_id(m).rfind("mla-", 0), 0u);
}

TEST(Kinds, AFieldThatDoesNotApplyGivesOnePointNotTwo) {
  // kv_layout swept with page sizes: the contiguous points are one point each, as before kinds.
  const std::vector<Point> points = expand_sweep(
      parse_config("sweep:\n  seq_len: 8\n  kv_layout: [contiguous, paged]\n  page_size: [4, 8]\n",
                   "k.yaml"),
      false);
  EXPECT_EQ(points.size(), 3u);
  // The page's other axis likewise: the contiguous point is one, without a page order in its id.
  const std::vector<Point> orders = expand_sweep(
      parse_config("sweep:\n  seq_len: 8\n  device: cpu\n  kv_layout: [contiguous, paged]\n"
                   "  page_order: [in_order, shuffled]\n",
                   "k.yaml"),
      false);
  ASSERT_EQ(orders.size(), 3u);
  EXPECT_EQ(orders[0].id, "b1-h1-s8-d64-bf16-causal-cpu");
  EXPECT_EQ(orders[1].id, "b1-h1-s8-d64-bf16-causal-cpu-paged16");
  EXPECT_EQ(orders[2].id, "b1-h1-s8-d64-bf16-causal-cpu-paged16-shuffled");
  // mla's v_head_dim does not apply to the absorbed form: its points are one each, the prefill's
  // two (1 + 2); a block where it applies to no point is refused (hostile_inputs_test.cpp).
  EXPECT_EQ(expand_sweep(parse_config("sweep:\n  kind: mla\n  absorbed: [true, false]\n"
                                      "  kv_heads: 1\n  seq_len: 1\n  v_head_dim: [64, 128]\n",
                                      "k.yaml"),
                         false)
                .size(),
            3u);
}

TEST(Kinds, MlaColumnsAreEmptyOnAttentionRowsAndAttentionsOnMlaRows) {
  const Problem a = only_point("sweep:\n  seq_len: 8\n");
  const Problem m = only_point("sweep:\n  kind: mla\n  seq_len: 8\n");
  for (const char* name :
       {"qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "kv_lora_rank", "absorbed"}) {
    EXPECT_TRUE(std::holds_alternative<std::monostate>(find_problem_field(name)->get(a))) << name;
    EXPECT_FALSE(std::holds_alternative<std::monostate>(find_problem_field(name)->get(m))) << name;
  }
  for (const char* name : {"window", "softcap"}) {
    EXPECT_TRUE(std::holds_alternative<std::monostate>(find_problem_field(name)->get(m))) << name;
    EXPECT_FALSE(std::holds_alternative<std::monostate>(find_problem_field(name)->get(a))) << name;
  }
  // An empty cell read back leaves the field as it was.
  Problem back = m;
  find_problem_field("qk_nope_head_dim")->set(back, FieldValue{});
  EXPECT_EQ(back.mla.qk_nope_head_dim, 128);
}

// FLOPs 2 (d_qk + d_v) per attended pair and head; bytes: q, the output and the cache once, the
// latent cache (v inside k) read once.
// A chunk bounds what a decode reads and what a prefill computes: Llama 4's local layer at 10000
// keys reads the last chunk's 10000 - 8192 = 1808 (keys 8192 .. 9999), its global layer all.
TEST(Kinds, AChunkBoundsTheKeysReadAndThePairs) {
  const std::string decode =
      "sweep:\n  heads: 8\n  kv_heads: 1\n  head_dim: 128\n  seq_len: 1\n  seq_len_kv: 10000\n";
  const Problem local = only_point(decode + "  chunk: 8192\n");
  const Problem global = only_point(decode);
  EXPECT_DOUBLE_EQ(point_bytes(local), 2.0 * 8 * 128 * 2 + 2.0 * 1808 * 256);
  EXPECT_DOUBLE_EQ(point_bytes(global), 2.0 * 8 * 128 * 2 + 2.0 * 10000 * 256);
  EXPECT_DOUBLE_EQ(point_flop(local), 2.0 * 8 * 256 * 1808);
  // At a chunk's last position (8192 keys) the chunk is the whole cache; one past it, one key.
  EXPECT_DOUBLE_EQ(point_flop(only_point(
                       "sweep:\n  seq_len: 1\n  seq_len_kv: 8192\n  chunk: 8192\n  head_dim: 8\n")),
                   2.0 * 16 * 8192);
  EXPECT_DOUBLE_EQ(point_flop(only_point(
                       "sweep:\n  seq_len: 1\n  seq_len_kv: 8193\n  chunk: 8192\n  head_dim: 8\n")),
                   2.0 * 16 * 1);
  // A causal prefill of 8 in chunks of 4: 1 + 2 + 3 + 4 pairs twice.
  EXPECT_DOUBLE_EQ(point_flop(only_point("sweep:\n  seq_len: 8\n  chunk: 4\n  head_dim: 8\n")),
                   2.0 * 16 * 20);
}

// A chunked prefill reads every key (each is in some query's chunk) and computes each chunk's
// triangle; a ragged batch's sequences each by their own length (64 and 16 in chunks of 16: 4 + 1
// triangles of 136 pairs).
TEST(Kinds, AChunkedPrefillReadsEveryKeyAndComputesEachChunk) {
  const Problem p = only_point(
      "sweep:\n  heads: 2\n  head_dim: 16\n  seq_len: 64\n  chunk: 16\n  dtype: fp32\n");
  EXPECT_DOUBLE_EQ(point_bytes(p), 4.0 * (64 * 2 * 16) * 2 + 4.0 * 64 * 2 * 32);
  EXPECT_DOUBLE_EQ(attended_pairs(p), 4 * 136);
  const Problem ragged = only_point(
      "sweep:\n  batch: 2\n  heads: 2\n  head_dim: 16\n  seq_lens: \"64,16\"\n  chunk: 16\n");
  EXPECT_DOUBLE_EQ(attended_pairs(ragged), 5 * 136);
  EXPECT_DOUBLE_EQ(point_flop(ragged), 2.0 * 2 * 32 * 680);
}

// Sinks are checked forward only (refused at direction); a chunk's backward is a point.
TEST(Kinds, SinksAreRefusedInTheBackwardAChunkIsNot) {
  expect_refused("sweep:\n  seq_len: 8\n  sinks: true\n  direction: bwd\n", "sweep.direction", 4,
                 "attention sinks are checked in the forward pass only");
  EXPECT_EQ(only_point("sweep:\n  seq_len: 8\n  chunk: 4\n  direction: bwd\n").chunk, 4);
}

// Non-causal, bottom-right: more queries than keys puts the first queries before key 0, in a chunk
// of no key (every backend would be `wrong`); as many queries as keys is a point.
TEST(Kinds, AChunkThatLeavesQueriesNoKeyIsRefused) {
  expect_refused("sweep:\n  seq_len: 8\n  seq_len_kv: 4\n  causal: false\n  chunk: 4\n",
                 "sweep.chunk", 5, "the first 4 queries stand before key 0");
  expect_refused("sweep:\n  batch: 2\n  seq_lens: \"3,9\"\n  seq_lens_kv: \"5,8\"\n  causal: false\n"
                 "  chunk: 4\n",
                 "sweep.chunk", 6, "(sequence 1) the first 1 queries");
  EXPECT_EQ(only_point("sweep:\n  seq_len: 4\n  seq_len_kv: 4\n  causal: false\n  chunk: 4\n").chunk, 4);
}

TEST(Kinds, TheWorkModelOfEachFormByHand) {
  const Problem prefill =
      only_point("sweep:\n  kind: mla\n  heads: 2\n  seq_len: 4\n  causal: false\n");
  EXPECT_DOUBLE_EQ(point_flop(prefill), 2.0 * 2 * (192 + 128) * 16);
  EXPECT_DOUBLE_EQ(point_bytes(prefill), 2.0 * (4 * 2 * 192 + 4 * 2 * 128 + 4 * 2 * (192 + 128)));
  const Problem causal = only_point("sweep:\n  kind: mla\n  heads: 2\n  seq_len: 4\n");
  EXPECT_DOUBLE_EQ(point_flop(causal), 2.0 * 2 * (192 + 128) * 10);  // 1 + 2 + 3 + 4 pairs
  const Problem decode = only_point(
      "sweep:\n  kind: mla\n  absorbed: true\n  batch: 2\n  heads: 16\n  seq_len: 1\n"
      "  seq_len_kv: 100\n  kv_layout: paged\n  page_size: 64\n");
  EXPECT_DOUBLE_EQ(point_flop(decode), 2.0 * 16 * (576 + 512) * 200);
  // q 576 and out 512 per head, 576 cache values a token (1152 bytes in bf16), 2 pages each.
  EXPECT_DOUBLE_EQ(point_bytes(decode), 2.0 * 2 * 16 * (576 + 512) + 2.0 * 200 * 576 + 4 * 4);
  const Problem backward = only_point(
      "sweep:\n  kind: mla\n  heads: 2\n  seq_len: 4\n  causal: false\n  direction: bwd\n");
  EXPECT_DOUBLE_EQ(point_flop(backward), 2.5 * 2.0 * 2 * (192 + 128) * 16);
  // Backward reads q, k, v, out and grad_out and writes dq, dk, dv: q and dq at 192, out and
  // grad_out at 128, k and v (and dk, dv) at 192 + 128, 2 bytes each.
  EXPECT_DOUBLE_EQ(point_bytes(backward), 2.0 * 2 * (4 * 2 * 192) + 2.0 * 2 * (4 * 2 * 128) +
                                              2.0 * 2 * (4 * 2 * (192 + 128)));
  // An fp8 cache: its values one byte each, q and the output two.
  const Problem fp8_decode = only_point(
      "sweep:\n  kind: mla\n  absorbed: true\n  batch: 2\n  heads: 16\n  seq_len: 1\n"
      "  seq_len_kv: 100\n  kv_layout: paged\n  page_size: 64\n  kv_dtype: fp8_e4m3\n");
  EXPECT_DOUBLE_EQ(point_bytes(fp8_decode), 2.0 * 2 * 16 * (576 + 512) + 1.0 * 200 * 576 + 4 * 4);
  EXPECT_DOUBLE_EQ(point_flop(fp8_decode), point_flop(decode));
  const Problem fp8_prefill = only_point(
      "sweep:\n  kind: mla\n  heads: 2\n  seq_len: 4\n  causal: false\n  dtype: fp16\n"
      "  kv_dtype: fp8_e4m3\n");
  EXPECT_DOUBLE_EQ(point_bytes(fp8_prefill), 2.0 * (4 * 2 * 192 + 4 * 2 * 128) + 1.0 * 4 * 2 * (192 + 128));
  // The tolerance grows with the q·k width as attention's does.
  EXPECT_DOUBLE_EQ(point_tolerance(0.02, prefill), 0.02 * std::sqrt(3.0));
  EXPECT_DOUBLE_EQ(point_tolerance(0.02, decode), 0.02 * 3);
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// A window bounded on one side only, [LEFT, -1] or [-1, RIGHT], is a window: the point id and the
// report's `window` cell both carry both edges in their order, causal or not; [-1, -1] is no
// window (no id part, an empty cell). An edge below -1 is refused.
TEST(Kinds, AOneSidedWindowKeepsItsEdgesInTheIdAndTheCell) {
  const Field<Problem>* window = find_problem_field("window");
  ASSERT_NE(window, nullptr);
  struct Case {
    const char* yaml;
    const char* id;
    const char* cell;
  };
  for (const Case& c : {
           Case{"causal: false\n  window: [3, -1]", "b1-h1-s8-d64-bf16-full-cpu-win3_-1", "3,-1"},
           Case{"causal: false\n  window: [-1, 3]", "b1-h1-s8-d64-bf16-full-cpu-win-1_3", "-1,3"},
           Case{"causal: false\n  window: [-1, 0]", "b1-h1-s8-d64-bf16-full-cpu-win-1_0", "-1,0"},
           Case{"causal: false\n  window: [0, -1]", "b1-h1-s8-d64-bf16-full-cpu-win0_-1", "0,-1"},
           Case{"causal: true\n  window: [5, -1]", "b1-h1-s8-d64-bf16-causal-cpu-win5_-1", "5,-1"},
           Case{"causal: true\n  window: [-1, 0]", "b1-h1-s8-d64-bf16-causal-cpu-win-1_0", "-1,0"},
           Case{"causal: true\n  window: [2, 0]", "b1-h1-s8-d64-bf16-causal-cpu-win2_0", "2,0"},
           Case{"causal: false\n  window: [-1, -1]", "b1-h1-s8-d64-bf16-full-cpu", ""},
           Case{"causal: true\n  window: [-1, -1]", "b1-h1-s8-d64-bf16-causal-cpu", ""},
       }) {
    const Problem p = only_point(std::string("sweep:\n  seq_len: 8\n  ") + c.yaml +
                                 "\n  device: cpu\n");
    EXPECT_EQ(point_id(p), c.id) << c.yaml;
    EXPECT_EQ(field_text(window->get(p)), c.cell) << c.yaml;
    // The cell reads back to the same edges (a report's row is the point it measured).
    Problem back;
    window->set(back, window->get(p));
    EXPECT_EQ(back.window_left, p.window_left) << c.yaml;
    EXPECT_EQ(back.window_right, p.window_right) << c.yaml;
  }
  // The two one-sided windows of the same width are two points.
  EXPECT_NE(point_id(only_point("sweep:\n  seq_len: 8\n  causal: false\n  window: [3, -1]\n")),
            point_id(only_point("sweep:\n  seq_len: 8\n  causal: false\n  window: [-1, 3]\n")));
  expect_refused("sweep:\n  seq_len: 8\n  causal: false\n  window: [-2, 0]\n", "sweep.window", 4,
                 "each -1 (unbounded)");
  expect_refused("sweep:\n  seq_len: 8\n  causal: false\n  window: [0, -2]\n", "sweep.window", 4,
                 "each -1 (unbounded)");
}

}  // namespace
}  // namespace attnbench
