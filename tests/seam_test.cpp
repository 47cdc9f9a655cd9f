// A kind with an input of its own and a variant with a field of its own, each added the way a new
// one is: one file (seam/) and one line (the add_ calls below, before anything reads the field
// table). Through them: the sweep's keys and ids, the inputs drawn, moved and fingerprinted, the
// reference, the checks that name what a backend ignored, the refusal of a backend that does not
// declare the variant. Its own executable, so that the other tests see the shipped lists alone.
#include "seam/seam.hpp"

#include "base/errors.hpp"
#include "config/config.hpp"
#include "config/sweep.hpp"
#include "kinds/problem.hpp"
#include "kinds/problem_kind.hpp"
#include "kinds/tensors.hpp"
#include "kinds/variant.hpp"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace attnbench {
namespace {

class Seams : public ::testing::Environment {
 public:
  void SetUp() override {
    add_problem_kind(test::biased_kind(), &test::biased_kind_tensors());
    add_problem_variant(test::temperature_variant(), &test::temperature_variant_tensors());
  }
};
const auto* const registered = ::testing::AddGlobalTestEnvironment(new Seams);

std::vector<Point> points_of(const std::string& yaml) {
  return expand_sweep(parse_config(yaml, "seam.yaml"), false);
}

// Attention in ATen on the uniform layout, as a backend computes it: the harness's mask, plus the
// key bias and the temperature where `apply` says so.
at::Tensor attention(const Inputs& in, bool bias, double temperature) {
  at::Tensor scores = at::matmul(in.q, in.k.transpose(-2, -1)) * in.scale;
  if (bias && in.input("key_bias"))
    scores = scores + in.input("key_bias")->view({in.problem.batch, 1, 1, in.problem.seq_len_kv});
  scores = scores / temperature;
  if (in.mask) scores = scores.masked_fill(*in.mask, -std::numeric_limits<double>::infinity());
  return at::matmul(at::softmax(scores, -1), in.v);
}

const VariantCheck* check_named(const std::vector<VariantCheck>& checks, const std::string& name) {
  for (const VariantCheck& c : checks)
    if (c.name == name) return &c;
  return nullptr;
}

constexpr const char* kBiased =
    "sweep:\n  kind: biased\n  batch: 2\n  heads: 4\n  seq_len: 16\n  head_dim: 16\n"
    "  dtype: fp32\n  bias_scale: [2, 3]\n";

TEST(Seams, AKindWithAnInputOfItsOwnIsAFileAndALine) {
  const std::vector<Point> points = points_of(kBiased);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].id, "biased-b2-h4-s16-d16-fp32-causal-cpu-bias2");
  EXPECT_EQ(points[1].id, "biased-b2-h4-s16-d16-fp32-causal-cpu-bias3");
  const Field<Problem>* f = find_problem_field("bias_scale");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kinds, std::vector<std::string>{"biased"});
  EXPECT_EQ(field_text(f->get(points[1].problem)), "3");
  // Its input: drawn at the spread its field says, fingerprinted, moved before a timed sample.
  c10::InferenceMode guard;
  InputTensors in = make_inputs(points[1].problem, 5);
  const at::Tensor& bias = in.input("key_bias");
  ASSERT_TRUE(bias.defined());
  EXPECT_EQ(bias.sizes(), (c10::IntArrayRef{2 * 16}));
  EXPECT_GT(bias.std().item<double>(), 2.0);  // drawn 3 wide, not 1
  EXPECT_NE(in.view().input("key_bias"), nullptr);
  const std::vector<InputPrint> before = input_prints(in);
  ASSERT_TRUE(std::any_of(before.begin(), before.end(),
                          [](const InputPrint& p) { return p.name == "key_bias"; }));
  const at::Tensor drawn = bias.clone();
  move_inputs(in, 1);
  EXPECT_FALSE(at::equal(in.input("key_bias"), drawn));
  EXPECT_NE(changed_input(before, input_prints(in)), "");
}

TEST(Seams, TheKindsReferenceAndItsCheckNameWhatABackendIgnored) {
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(points_of(kBiased)[0].problem, 7);
  const at::Tensor right = attention(in.view(), true, 1);
  EXPECT_LT(forward_error(in, right).judged(), 1e-5);
  const at::Tensor blind = attention(in.view(), false, 1);
  EXPECT_GT(forward_error(in, blind).rel_err, 0.1);
  const std::vector<VariantCheck> checks = check_variants(in, blind);
  const VariantCheck* ignored = check_named(checks, "key_bias");
  ASSERT_NE(ignored, nullptr);
  EXPECT_LT(ignored->off_without, 1e-5);  // the output is attention without the bias
  EXPECT_GT(ignored->off_with, 0.1);
  EXPECT_GT(ignored->moved, 0.1);
  // The honest output is nearer the reference than the reference without the bias.
  const VariantCheck* honest = check_named(check_variants(in, right), "key_bias");
  ASSERT_NE(honest, nullptr);
  EXPECT_LT(honest->off_with, honest->off_without);
}

constexpr const char* kTemperature =
    "sweep:\n  batch: 2\n  heads: 4\n  seq_len: 16\n  head_dim: 16\n  dtype: fp32\n"
    "  temperature: [1, 2.5]\n";

TEST(Seams, AVariantWithAFieldOfItsOwnIsAFileAndALine) {
  const std::vector<Point> points = points_of(kTemperature);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].id, "b2-h4-s16-d16-fp32-causal-cpu");  // 1: none, no id part
  EXPECT_EQ(points[1].id, "b2-h4-s16-d16-fp32-causal-cpu-temp2.5");
  EXPECT_EQ(points[0].problem.variant_names(), std::vector<std::string>{});
  EXPECT_EQ(points[1].problem.variant_names(), std::vector<std::string>{"temperature"});
  EXPECT_EQ(points[1].problem.variants(), "a softmax temperature");
  const Field<Problem>* f = find_problem_field("temperature");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kinds, std::vector<std::string>{"attention"});
  EXPECT_NE(variant_check_list().find("temperature"), std::string::npos);
  // Its refusal, located at its key; and not a field of another kind.
  try {
    parse_config("sweep:\n  seq_len: 8\n  temperature: 0\n", "seam.yaml");
    ADD_FAILURE() << "a temperature of 0 was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "sweep.temperature") << e.what();
    EXPECT_NE(std::string(e.what()).find("a temperature is above 0"), std::string::npos);
  }
  EXPECT_THROW(parse_config("sweep:\n  kind: mla\n  seq_len: 8\n  temperature: 2\n", "seam.yaml"),
               ConfigError);
}

class Declares final : public Backend {
 public:
  explicit Declares(std::vector<std::string> variants) : variants_(std::move(variants)) {}
  std::string name() const override { return "declares"; }
  std::string description() const override { return "a test's"; }
  Support supports(const Problem&) const override { return Support::yes(); }
  at::Tensor forward(const Inputs& in) override { return attention(in, false, 1); }
  std::vector<std::string> variants() const override { return variants_; }

 private:
  std::vector<std::string> variants_;
};

TEST(Seams, ABackendRunsTheVariantOnlyWhenItDeclaresIt) {
  const Problem p = points_of(kTemperature)[1].problem;
  const Support abi4 = declared_support(Declares({Backend::kAbi4Variants}), p);
  EXPECT_FALSE(abi4.supported);
  EXPECT_NE(abi4.reason.find("declares does not run a softmax temperature (it declares ragged, "
                             "paged, window, softcap)"),
            std::string::npos)
      << abi4.reason;
  EXPECT_TRUE(declared_support(Declares({"temperature"}), p).supported);
  EXPECT_TRUE(declared_support(Declares({}), points_of(kTemperature)[0].problem).supported);
}

TEST(Seams, TheVariantsHookIsInTheReferenceAndItsCheckNamesIt) {
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(points_of(kTemperature)[1].problem, 9);
  const at::Tensor right = attention(in.view(), false, 2.5);
  EXPECT_LT(forward_error(in, right).judged(), 1e-5);
  const at::Tensor blind = attention(in.view(), false, 1);
  EXPECT_GT(forward_error(in, blind).rel_err, 0.05);
  const VariantCheck* ignored = check_named(check_variants(in, blind), "temperature");
  ASSERT_NE(ignored, nullptr);
  EXPECT_LT(ignored->off_without, 1e-5);
  EXPECT_LT(ignored->off_without, ignored->off_with);
  // Only the variant's own checks when asked for them (a variant's own checked call).
  EXPECT_EQ(check_variants(in, blind, "temperature").size(), 1u);
  EXPECT_TRUE(check_variants(in, blind, "sinks").empty());
}

}  // namespace
}  // namespace attnbench
