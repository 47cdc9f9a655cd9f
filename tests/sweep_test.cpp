#include "config/sweep.hpp"
#include "base/problem.hpp"
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

}  // namespace
}  // namespace attnbench
