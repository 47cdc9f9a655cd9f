#include "config/sweep.hpp"
#include "kinds/problem.hpp"
#include "config/config.hpp"

#include <gtest/gtest.h>

namespace attnbench {
namespace {

TEST(Sweep, CartesianProductInFileOrderLastAxisFastest) {
  const SweepConfig c = parse_config(
      "sweep:\n  batch: [1, 2]\n  seq_len: [128, 256, 512]\n  device: cpu\n", "s.yaml");
  const auto points = expand_sweep(c, false);
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[0].problem.batch, 1);
  EXPECT_EQ(points[0].problem.seq_len, 128);
  EXPECT_EQ(points[1].problem.seq_len, 256);
  EXPECT_EQ(points[3].problem.batch, 2);
  EXPECT_EQ(points[3].problem.seq_len, 128);
  EXPECT_EQ(points[5].id, "b2-h1-s512-d64-bf16-causal-cpu");
}

TEST(Sweep, ZippedAxesMoveTogether) {
  const SweepConfig c = parse_config(
      "sweep:\n  head_dim: [64, 128]\n  zip:\n    - batch: [4, 2, 1]\n      seq_len: {from: 1024, "
      "to: 4096, mul: 2}\n",
      "z.yaml");
  const auto points = expand_sweep(c, true);
  ASSERT_EQ(points.size(), 6u);
  for (const auto& p : points) EXPECT_EQ(p.problem.batch * p.problem.seq_len, 4096) << p.id;
  EXPECT_EQ(points[0].problem.head_dim, 64);
  EXPECT_EQ(points[3].problem.head_dim, 128);
  EXPECT_EQ(points[0].problem.device, Device::cuda);
}

TEST(Sweep, AZipGroupWrittenFirstVariesSlowest) {
  const SweepConfig c = parse_config(
      "sweep:\n  zip:\n    - batch: [4, 1]\n      seq_len: [256, 1024]\n  head_dim: [64, 128]\n  "
      "dtype: [bf16, fp16]\n",
      "z.yaml");
  const auto points = expand_sweep(c, false);
  ASSERT_EQ(points.size(), 8u);
  const std::vector<std::string> expected = {
      "b4-h1-s256-d64-bf16-causal-cpu",   "b4-h1-s256-d64-fp16-causal-cpu",
      "b4-h1-s256-d128-bf16-causal-cpu",  "b4-h1-s256-d128-fp16-causal-cpu",
      "b1-h1-s1024-d64-bf16-causal-cpu",  "b1-h1-s1024-d64-fp16-causal-cpu",
      "b1-h1-s1024-d128-bf16-causal-cpu", "b1-h1-s1024-d128-fp16-causal-cpu"};
  for (size_t i = 0; i < points.size(); ++i) EXPECT_EQ(points[i].id, expected[i]) << i;
}

TEST(Sweep, KvHeadsAndSeqLenKvFollowHeadsAndSeqLenUnlessSet) {
  const SweepConfig plain =
      parse_config("sweep:\n  heads: [4, 8]\n  seq_len: [16, 32]\n", "p.yaml");
  for (const auto& point : expand_sweep(plain, false)) {
    EXPECT_EQ(point.problem.kv_heads, point.problem.heads) << point.id;
    EXPECT_EQ(point.problem.seq_len_kv, point.problem.seq_len) << point.id;
    EXPECT_EQ(point.problem.direction, Direction::fwd) << point.id;
  }
  const SweepConfig set = parse_config(
      "sweep:\n  heads: 32\n  kv_heads: [8, 32]\n  seq_len: 1\n  seq_len_kv: 4096\n  "
      "direction: [fwd, bwd]\n  device: cuda\n",
      "s.yaml");
  const auto points = expand_sweep(set, false);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].id, "b1-h32-kv8-s1-skv4096-d64-bf16-causal-cuda");
  EXPECT_EQ(points[1].id, "b1-h32-kv8-s1-skv4096-d64-bf16-causal-cuda-bwd");
  EXPECT_EQ(points[2].id, "b1-h32-s1-skv4096-d64-bf16-causal-cuda");  // kv_heads = heads: not shown
  EXPECT_EQ(points[3].problem.direction, Direction::bwd);
  EXPECT_EQ(points[3].problem.seq_len_kv, 4096);
}

TEST(Sweep, EveryAxisReachesTheProblem) {
  const SweepConfig c = parse_config(
      "sweep:\n  batch: 3\n  heads: 5\n  seq_len: 77\n  head_dim: 96\n  dtype: fp32\n  causal: "
      "false\n  device: cuda\n",
      "a.yaml");
  const auto points = expand_sweep(c, false);
  ASSERT_EQ(points.size(), 1u);
  const Problem& p = points[0].problem;
  EXPECT_EQ(p.batch, 3);
  EXPECT_EQ(p.heads, 5);
  EXPECT_EQ(p.seq_len, 77);
  EXPECT_EQ(p.head_dim, 96);
  EXPECT_EQ(p.dtype, DType::f32);
  EXPECT_FALSE(p.causal);
  EXPECT_EQ(p.device, Device::cuda);  // explicit: not resolved by what this machine has
  EXPECT_EQ(points[0].id, "b3-h5-s77-d96-fp32-full-cuda");
}

TEST(Sweep, RangesIncludeTheirEnds) {
  const SweepConfig c = parse_config(
      "sweep:\n  seq_len: {from: 3, to: 11, step: 4}\n  batch: {from: 2, to: 16, mul: 2}\n",
      "r.yaml");
  const auto points = expand_sweep(c, false);
  ASSERT_EQ(points.size(), 12u);  // 3 7 11 x 2 4 8 16
  EXPECT_EQ(points.front().problem.seq_len, 3);
  EXPECT_EQ(points.front().problem.batch, 2);
  EXPECT_EQ(points.back().problem.seq_len, 11);
  EXPECT_EQ(points.back().problem.batch, 16);
}

TEST(Sweep, DefaultsAndAutoDevice) {
  const SweepConfig c = parse_config("sweep:\n  seq_len: 256\n  device: auto\n", "d.yaml");
  const auto cpu = expand_sweep(c, false);
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0].problem.device, Device::cpu);
  EXPECT_EQ(cpu[0].problem.head_dim, 64);
  EXPECT_EQ(cpu[0].problem.dtype, DType::bf16);
  EXPECT_TRUE(cpu[0].problem.causal);
  EXPECT_EQ(expand_sweep(c, true)[0].problem.device, Device::cuda);
}

TEST(Sweep, AutoAndExplicitDeviceNameOnePointOnce) {
  const SweepConfig c = parse_config("sweep:\n  seq_len: 256\n  device: [auto, cpu]\n", "d.yaml");
  EXPECT_EQ(expand_sweep(c, false).size(), 1u);
  EXPECT_EQ(expand_sweep(c, true).size(), 2u);
}

TEST(Types, CausalFlopCountsTheUnmaskedHalf) {
  Problem p;
  p.batch = 2, p.heads = 3, p.kv_heads = 3, p.seq_len = 4, p.seq_len_kv = 4, p.head_dim = 8;
  p.causal = false;
  EXPECT_DOUBLE_EQ(attention_flop(p), 4.0 * 2 * 3 * 8 * 16);
  p.causal = true;
  EXPECT_DOUBLE_EQ(attention_flop(p), 4.0 * 2 * 3 * 8 * 10);  // 4 + 3 + 2 + 1 pairs
}

TEST(Types, FlopOfNonSquareCausalGqaAndBackward) {
  Problem p;
  p.batch = 1, p.heads = 4, p.kv_heads = 2, p.seq_len = 3, p.seq_len_kv = 5, p.head_dim = 8;
  p.causal = true;  // bottom-right: rows see 3, 4, 5 keys
  EXPECT_DOUBLE_EQ(attended_pairs(p), 12);
  EXPECT_DOUBLE_EQ(attention_flop(p), 4.0 * 4 * 8 * 12);  // query heads count, kv_heads do not
  p.causal = false;
  EXPECT_DOUBLE_EQ(attended_pairs(p), 15);
  p.seq_len = 1, p.seq_len_kv = 131072, p.causal = true;  // decode sees the whole cache
  EXPECT_DOUBLE_EQ(attended_pairs(p), 131072);
  p.direction = Direction::bwd;
  EXPECT_DOUBLE_EQ(attention_flop(p), 2.5 * 4.0 * 4 * 8 * 131072);
  p.seq_len = 5, p.seq_len_kv = 3;  // more queries than keys: the first two rows see none
  EXPECT_DOUBLE_EQ(attended_pairs(p), 1 + 2 + 3);
}

// tp: each point once per tensor-parallel degree, its heads divided as served.
std::vector<std::pair<int64_t, int64_t>> heads_of(const std::string& yaml) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const Point& p : expand_sweep(parse_config(yaml, "tp.yaml"), false))
    out.emplace_back(p.problem.heads, p.problem.kv_heads);
  return out;
}

TEST(Sweep, TpDividesTheHeadsAsServed) {
  using H = std::vector<std::pair<int64_t, int64_t>>;
  // Qwen3-32B at TP1 and TP8: 64/8, then 8/1 (each GPU one of the 8 kv heads).
  EXPECT_EQ(heads_of("sweep:\n  seq_len: 8\n  heads: 64\n  kv_heads: 8\n  tp: [1, 8]\n"),
            (H{{64, 8}, {8, 1}}));
  // Fewer kv heads than GPUs: one a GPU, replicated (Qwen3-235B's 4 over 8).
  EXPECT_EQ(heads_of("sweep:\n  seq_len: 8\n  heads: 64\n  kv_heads: 4\n  tp: 8\n"), (H{{8, 1}}));
  // More: divided (16 over 8 is 2 a GPU); a group of 5 (Llama 4's 40/8 at TP8).
  EXPECT_EQ(heads_of("sweep:\n  seq_len: 8\n  heads: 32\n  kv_heads: 16\n  tp: 8\n"), (H{{4, 2}}));
  EXPECT_EQ(heads_of("sweep:\n  seq_len: 8\n  heads: 40\n  kv_heads: 8\n  tp: 8\n"), (H{{5, 1}}));
  // The largest degree, 4096, over as many heads.
  EXPECT_EQ(heads_of("sweep:\n  seq_len: 8\n  heads: 4096\n  kv_heads: 4096\n  tp: 4096\n"),
            (H{{1, 1}}));
  // tp 1 changes nothing; MLA's absorbed decode keeps its one latent head.
  EXPECT_EQ(heads_of("sweep:\n  seq_len: 8\n  heads: 6\n  kv_heads: 3\n  tp: 1\n"), (H{{6, 3}}));
  EXPECT_EQ(heads_of("sweep:\n  kind: mla\n  absorbed: true\n  seq_len: 1\n  seq_len_kv: 64\n"
                     "  heads: 128\n  tp: 8\n"),
            (H{{16, 1}}));
  // The points of each degree in turn, and their ids apart.
  const auto points = expand_sweep(
      parse_config("sweep:\n  seq_len: [8, 16]\n  heads: 16\n  tp: [1, 2]\n", "tp.yaml"), false);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[1].id, "b1-h16-s16-d64-bf16-causal-cpu");
  EXPECT_EQ(points[2].id, "b1-h8-s8-d64-bf16-causal-cpu");
}

TEST(Sweep, ATpTheHeadsCannotTakeIsRefusedAtItsKey) {
  auto refused = [](const std::string& yaml, int line, const std::string& says) {
    try {
      expand_sweep(parse_config(yaml, "tp.yaml"), false);
      ADD_FAILURE() << "accepted:\n" << yaml;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), "sweep.tp") << e.what();
      EXPECT_EQ(e.line(), line) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused("sweep:\n  seq_len: 8\n  heads: 12\n  tp: 8\n", 4, "heads 12 are not divisible");
  refused("sweep:\n  seq_len: 8\n  heads: 24\n  kv_heads: 3\n  tp: 8\n", 5,
          "kv_heads 3 neither divide");
  refused("sweep:\n  seq_len: 8\n  heads: 48\n  kv_heads: 12\n  tp: 8\n", 5,
          "kv_heads 12 neither divide");
  refused("sweep:\n  seq_len: 8\n  tp: 0\n", 3, "");
  refused("sweep:\n  seq_len: 8\n  tp: 4097\n", 3, "whole number from 1 to 4096");
  refused("sweep:\n  seq_len: 8\n  tp: []\n", 3, "expected a degree or a list of them");
  refused("sweep:\n  seq_len: 8\n  tp: 1.5\n", 3, "whole number");
  EXPECT_THROW(parse_config("sweep:\n  seq_len: 8\n  zip:\n    - tp: [1, 2]\n      batch: [1, 2]\n",
                            "tp.yaml"),
               ConfigError);
}

}  // namespace
}  // namespace attnbench
