// A third kind added the way a new kind of attention is: its file (toy_kind/) and one line, the
// add_problem_kind() below, before anything reads the field table. Its own executable, so that
// the other tests see the shipped kinds alone.
#include "toy_kind/toy_kind.hpp"
#include "base/errors.hpp"
#include "base/names.hpp"
#include "config/config.hpp"
#include "config/sweep.hpp"
#include "kinds/problem.hpp"
#include "kinds/problem_kind.hpp"

#include <gtest/gtest.h>

namespace attnbench {
namespace {

class ToyKinds : public ::testing::Environment {
 public:
  void SetUp() override {
    add_problem_kind(test::toy_kind());
    add_problem_kind(test::leaky_kind());
  }
};
const auto* const registered = ::testing::AddGlobalTestEnvironment(new ToyKinds);

std::vector<Point> points_of(const std::string& yaml) {
  return expand_sweep(parse_config(yaml, "toy.yaml"), false);
}

TEST(ToyKind, IsAKindWithItsFieldAColumnAndASweepKey) {
  ASSERT_EQ(find_problem_kind("toy"), &test::toy_kind());
  const Field<Problem>* width = find_problem_field("width");
  ASSERT_NE(width, nullptr);
  EXPECT_EQ(width->kinds, std::vector<std::string>{"toy"});
  const std::vector<Point> points =
      points_of("sweep:\n  kind: toy\n  heads: 4\n  seq_len: 8\n  width: [32, 64]\n");
  ASSERT_EQ(points.size(), 2u);
  // What it derives (kv_heads, head_dim) adds no id part: its own width says it.
  EXPECT_EQ(points[0].id, "toy-b1-h4-s8-bf16-causal-cpu-w32");
  EXPECT_EQ(points[1].id, "toy-b1-h4-s8-bf16-causal-cpu-w64");
  const Problem& p = points[1].problem;
  EXPECT_EQ(p.head_dim, 64);
  EXPECT_EQ(p.head_dim_v, 64);
  EXPECT_EQ(p.kv_heads, 1);  // derived: multi-query
  EXPECT_DOUBLE_EQ(p.scale, 1.0 / 64);
  // The generic work model: 2 (64 + 64) FLOP per pair and head.
  EXPECT_DOUBLE_EQ(point_flop(p), 2.0 * 4 * 128 * 36);
}

TEST(ToyKind, ItsFieldsAndWhatItDerivesAreRefusedWhereTheyDoNotBelong) {
  auto refused_at = [](const std::string& yaml, const std::string& key, const std::string& says) {
    try {
      parse_config(yaml, "toy.yaml");
      ADD_FAILURE() << "accepted:\n" << yaml;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), key) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused_at("sweep:\n  seq_len: 8\n  width: 32\n", "sweep.width", "width is a field of kind toy");
  refused_at("sweep:\n  kind: toy\n  seq_len: 8\n  kv_heads: 2\n", "sweep.kv_heads",
             "kind toy derives kv_heads");
  refused_at("sweep:\n  kind: toy\n  seq_len: 8\n  qk_rope_head_dim: 32\n",
             "sweep.qk_rope_head_dim", "qk_rope_head_dim is a field of kind mla and dsa, not of toy");
}

TEST(ToyKind, TwoPointsThatShareAnIdAreALocatedErrorNeverOneRow) {
  try {
    parse_config("sweep:\n  kind: leaky\n  seq_len: 8\n  depth: [2, 3]\n", "toy.yaml");
    ADD_FAILURE() << "two points with one id were accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "sweep.depth") << e.what();
    EXPECT_EQ(e.line(), 4) << e.what();
    EXPECT_NE(std::string(e.what()).find("differ in depth (2 and 3) but share the id"),
              std::string::npos)
        << e.what();
  }
}

// `layers:` reads the kinds off the list: an added kind's layers are counted, and a kind that is
// not there is refused naming every kind, the added ones too.
TEST(ToyKind, ItsLayersAreCountedAndTheRefusalNamesIt) {
  const SweepConfig c = parse_config(
      "layers: {toy: 12, attention: 4}\nsweep:\n  - kind: toy\n    seq_len: 8\n"
      "  - seq_len: 8\n",
      "toy.yaml");
  EXPECT_EQ(c.layers,
            (std::vector<std::pair<std::string, int64_t>>{{"toy", 12}, {"attention", 4}}));
  try {
    parse_config("layers: {toys: 12}\nsweep:\n  kind: toy\n  seq_len: 8\n", "toy.yaml");
    ADD_FAILURE() << "layers of a kind there is not were taken";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "layers.toys") << e.what();
    std::vector<std::string> names;  // every kind of the list, the added ones last
    for (const ProblemKind* k : problem_kinds()) names.push_back(k->name());
    ASSERT_EQ(names.back(), "leaky");
    EXPECT_NE(
        std::string(e.what()).find("'toys' is no problem kind (the kinds: " + one_of(names) + ")"),
        std::string::npos)
        << e.what();
  }
}

TEST(ToyKind, NoKindIsAddedTwiceOrAfterTheTableWasMade) {
  EXPECT_THROW(add_problem_kind(test::toy_kind()), std::logic_error);  // its name is taken
  problem_fields();
  EXPECT_TRUE(problem_fields_made());
}

}  // namespace
}  // namespace attnbench
