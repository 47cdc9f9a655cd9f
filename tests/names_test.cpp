#include "base/names.hpp"

#include <gtest/gtest.h>

namespace attnbench {
namespace {

template <class E>
void expect_round_trip(const std::vector<std::string>& names) {
  EXPECT_EQ(enum_names<E>(), names);
  for (const auto& n : name_table<E>()) {
    EXPECT_EQ(parse_enum<E>(n.name), n.value) << n.name;
    if (!n.alias) EXPECT_EQ(to_string(n.value), n.name);
  }
  EXPECT_FALSE(parse_enum<E>("no-such-name"));
  EXPECT_FALSE(parse_enum<E>(""));
}

TEST(Names, EveryTableReadsBackWhatItWrites) {
  expect_round_trip<DType>({"fp16", "bf16", "fp32", "fp8_e4m3"});
  expect_round_trip<Device>({"cpu", "cuda"});
  expect_round_trip<TimingMode>({"cold", "batch", "graph", "wall"});
  expect_round_trip<Pass>(
      {"correctness", "timing", "cpu", "memory", "ops", "kernels", "energy"});
  expect_round_trip<PowerMode>({"sustained", "burst"});
  expect_round_trip<Direction>({"fwd", "bwd"});
  expect_round_trip<Status>({"ok", "unsupported", "wrong", "error", "oom", "crashed", "timeout"});
  expect_round_trip<ActivityKind>({"kernel", "memcpy", "memset"});
  expect_round_trip<Verdict>({"same", "unsure", "better", "worse", "n/a"});
}

TEST(Names, AliasesAreReadButNeverWritten) {
  EXPECT_EQ(parse_enum<DType>("half"), DType::f16);
  EXPECT_EQ(parse_enum<DType>("bfloat16"), DType::bf16);
  EXPECT_EQ(parse_enum<DType>("float"), DType::f32);
  EXPECT_EQ(to_string(DType::f16), "fp16");
  EXPECT_EQ(parse_enum<DType>("fp8"), DType::fp8_e4m3);
  EXPECT_EQ(enum_hint<DType>(), "fp16, bf16, fp32 or fp8_e4m3");
}

TEST(Names, OneOfJoinsLikeASentence) {
  EXPECT_EQ(one_of({"a"}), "a");
  EXPECT_EQ(one_of({"a", "b"}), "a or b");
  EXPECT_EQ(one_of({"a", "b", "c"}), "a, b or c");
  EXPECT_EQ(one_of({}), "");
}

TEST(Names, SplitKeepsEmptyItemsAndOpNamesLoseTheirNamespace) {
  EXPECT_EQ(split("a:b::c", ':'), (std::vector<std::string>{"a", "b", "", "c"}));
  EXPECT_EQ(split("0,", ','), (std::vector<std::string>{"0", ""}));
  EXPECT_EQ(split("", ':'), std::vector<std::string>{""});
  EXPECT_EQ(op_name("aten::masked_fill"), "masked_fill");
  EXPECT_EQ(op_name("autograd::engine"), "autograd::engine");
}

}  // namespace
}  // namespace attnbench
