// Attention sinks (gpt-oss; `sinks: true`): the logits drawn per head near the scores'
// log-sum-exp, the textbook backends that apply them against the float64 reference, the errors a
// kernel makes with them (ignored, applied to another head, at another scale, added to the
// numerator), a backend that declares them and ignores them read `wrong` through the runner, and
// the refusal of every backend that does not declare them. On a GPU: every backend at a prefill
// and a decode, right or saying why not.
#include "gpu_support.hpp"
#include "kinds/problem_kind.hpp"
#include "test_support.hpp"

#include <c10/core/InferenceMode.h>

#include <cmath>
#include <iostream>

namespace attnbench {
namespace {

using test::backend;

constexpr double kExact = 1e-5;  // float32 against float64

// gpt-oss's shape: 64 wide heads in groups of 8 (here 8 query heads, 1 kv head), a decode against
// a long cache or a short prefill; float32 on the CPU.
Problem gpt_oss(int64_t seq_len = 1, int64_t seq_len_kv = 2048) {
  Problem p = test::with_kv(test::problem(2, 8, seq_len, 64, DType::f32, true, Device::cpu), 1,
                            seq_len_kv);
  p.sinks = true;
  return p;
}

// What a bf16 row of the point must be within: the bar a planted error must clear.
double bf16_tolerance(Problem p) {
  p.dtype = DType::bf16;
  return point_tolerance(default_tolerances().at(DType::bf16), p);
}

TEST(Sinks, OneLogitPerHeadNearTheScoresLogSumExp) {
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(gpt_oss(1, 2048), 1);
  ASSERT_TRUE(in.input("sinks").defined());
  EXPECT_EQ(in.input("sinks").sizes(), (c10::IntArrayRef{8}));
  EXPECT_EQ(in.input("sinks").scalar_type(), at::kFloat);
  // log(2048) + 0.5 = 8.1, give or take a few units per head, and the heads differ.
  EXPECT_NEAR(in.input("sinks").mean().item<double>(), std::log(2048.0) + 0.5, 2.0);
  EXPECT_GT((in.input("sinks").max() - in.input("sinks").min()).item<double>(), 0.5);
  // A window bounds what a query sees, and the sinks with it: log(128) + 0.5.
  Problem windowed = gpt_oss(1, 2048);
  windowed.window_left = 127;
  EXPECT_NEAR(make_inputs(windowed, 1).input("sinks").mean().item<double>(), std::log(128.0) + 0.5, 2.0);
  // Without sinks there is none, and the other inputs are drawn as before.
  Problem plain = gpt_oss(1, 2048);
  plain.sinks = false;
  const InputTensors without = make_inputs(plain, 1);
  EXPECT_FALSE(without.input("sinks").defined());
  EXPECT_TRUE(at::equal(without.q, in.q));
  EXPECT_TRUE(at::equal(without.k, in.k));
}

TEST(Sinks, TheTextbookBackendsApplyThem) {
  c10::InferenceMode guard;
  Problem ragged = gpt_oss(9, 9);
  ragged.q_lens = {9, 3, 1}, ragged.kv_lens = {9, 30, 17}, ragged.batch = 3;
  ragged.seq_len_kv = 30;
  Problem windowed = gpt_oss(1, 300);
  windowed.window_left = 127;
  Problem mha = gpt_oss(16, 16);
  mha.kv_heads = 8, mha.causal = false;
  Problem gqa = gpt_oss(1, 300);  // groups of 4: kv head g's query heads 4g .. 4g + 3
  gqa.kv_heads = 2;
  const std::vector<std::pair<const char*, Problem>> points = {
      {"decode", gpt_oss()}, {"prefill", gpt_oss(24, 24)}, {"ragged", ragged},
      {"window", windowed},  {"mha, full", mha}, {"gqa of 4", gqa}};
  for (const auto& [what, p] : points) {
    const InputTensors in = make_inputs(p, 2);
    for (const char* name : {"naive", "inplace"}) {
      ASSERT_TRUE(declared_support(backend(name), p).supported) << name;
      ASSERT_TRUE(backend(name).supports(p).supported) << name << " " << what;
      EXPECT_LT(forward_error(in, backend(name).forward(in.view())).rel_err, kExact)
          << name << " " << what;
    }
  }
}

// In bf16 too, within a bf16 row's tolerance: the sinks' column is taken in float32 (a sink near
// 10 rounded to bf16 read 0.029 against 0.02 on the H100).
TEST(Sinks, TheTextbookBackendsAreWithinBf16sTolerance) {
  c10::InferenceMode guard;
  for (int64_t seq_len : {1, 256}) {
    Problem p = gpt_oss(seq_len, 1024);
    p.dtype = DType::bf16;
    const InputTensors in = make_inputs(p, 5);
    for (const char* name : {"naive", "inplace"})
      EXPECT_LT(forward_error(in, backend(name).forward(in.view())).rel_err, bf16_tolerance(p))
          << name << " s " << seq_len;
  }
}

// Each planted error is run through the textbook backend with the sinks it would in effect use.
TEST(Sinks, IgnoredOnAnotherHeadOrAtAnotherScaleIsCaught) {
  c10::InferenceMode guard;
  for (int64_t seq_len : {1, 64}) {  // a decode, and a prefill against the same cache
    const Problem p = gpt_oss(seq_len, 2048);
    const InputTensors in = make_inputs(p, 3);
    auto planted = [&](const at::Tensor& sinks) {
      InputTensors wrong = in;
      wrong.set_input("sinks", sinks);
      return forward_error(in, backend("naive").forward(wrong.view())).rel_err;
    };
    ASSERT_LT(planted(in.input("sinks")), kExact);
    EXPECT_GT(planted(at::Tensor()), bf16_tolerance(p)) << "ignored, s " << seq_len;
    EXPECT_GT(planted(in.input("sinks").roll(1)), bf16_tolerance(p)) << "the next head's, s " << seq_len;
    EXPECT_GT(planted(in.input("sinks") * in.scale), bf16_tolerance(p)) << "scaled, s " << seq_len;
    EXPECT_GT(planted(in.input("sinks").exp()), bf16_tolerance(p)) << "e^sink as the logit, s " << seq_len;
  }
}

// The sink in the numerator as well (a value of zero weighted in): the output of a softmax over
// keys and sink, but rows that no longer sum to the attention's. Built by hand: a kernel's bug.
TEST(Sinks, ASinkGivenAValueIsCaught) {
  c10::InferenceMode guard;
  const Problem p = gpt_oss(1, 2048);
  const InputTensors in = make_inputs(p, 4);
  // A sink that adds v's mean as its value: out + w_sink * mean(v).
  const at::Tensor scores = at::matmul(in.q, in.k.transpose(-2, -1)) * in.scale;  // [b, h, 1, n]
  const at::Tensor sink = in.input("sinks").view({1, -1, 1, 1}).expand({2, 8, 1, 1});
  const at::Tensor weights = at::softmax(at::cat({scores, sink}, -1), -1);
  const at::Tensor values = at::cat({in.v, in.v.mean(2, true)}, 2);  // [b, 1, n + 1, d]
  const at::Tensor out = at::matmul(weights, values);
  EXPECT_GT(forward_error(in, out).rel_err, bf16_tolerance(p));
}

TEST(Sinks, ABackendThatIgnoresThemReadsWrongThroughTheRunner) {
  static const PluginSet faulty = load_plugins(ATTNBENCH_FAULTY_PLUGIN_DIR);
  const LoadedBackend* blind = faulty.find("sink_blind");
  ASSERT_TRUE(blind) << "tests/faulty_plugins/sink_blind.cpp not built";
  test::MeasuringRunner runner(test::host(), test::correctness_options());
  for (DType dtype : {DType::bf16, DType::f32}) {
    Problem p = gpt_oss(1, 1024);
    p.dtype = dtype;
    const BackendRecords with = runner.measure({p, point_id(p)}, *blind);
    ASSERT_FALSE(with.rows.empty());
    EXPECT_EQ(with.rows[0].status, Status::wrong)
        << to_string(dtype) << ": " << with.rows[0].reason;
    p.sinks = false;  // the same backend without sinks is right
    const BackendRecords without = runner.measure({p, point_id(p)}, *blind);
    ASSERT_FALSE(without.rows.empty());
    EXPECT_EQ(without.rows[0].status, Status::ok) << without.rows[0].reason;
  }
}

TEST(Sinks, BackendsThatDoNotDeclareThemRefuseNamingTheVariant) {
  const Problem p = gpt_oss();
  test::expect_undeclared(p, {"flash", "efficient", "cudnn", "math", "fa3"}, "attention sinks");
  for (const char* name : {"naive", "inplace", "cudnn-fe", "flashinfer"})
    if (const LoadedBackend* loaded = test::plugins().find(name))
      EXPECT_TRUE(declared_support(*loaded->backend, p).supported) << name;
}

// On a GPU: every backend at gpt-oss's full and sliding layers, prefill and decode, `ok` within
// the row's tolerance or `unsupported` with the reason; sink_blind `wrong`.
TEST(GpuSinks, EveryBackendIsRightOrSaysWhyNotAndTheBlindOneIsWrong) {
  REQUIRE_CUDA();
  static const PluginSet faulty = load_plugins(ATTNBENCH_FAULTY_PLUGIN_DIR);
  test::MeasuringRunner runner(test::host(), test::correctness_options());
  auto on_gpu = [](Problem p, int64_t window_left = -1) {
    p.dtype = DType::bf16, p.device = Device::cuda, p.window_left = window_left;
    return p;
  };
  Problem ragged = gpt_oss(1024, 1024);
  ragged.q_lens = ragged.kv_lens = {1024, 300};
  const std::vector<std::pair<const char*, Problem>> points = {
      {"prefill", on_gpu(gpt_oss(1024, 1024))},
      {"prefill, window 128", on_gpu(gpt_oss(1024, 1024), 127)},
      {"decode", on_gpu(gpt_oss(1, 8192))},
      {"decode, window 128", on_gpu(gpt_oss(1, 8192), 127)},
  };
  std::vector<const LoadedBackend*> backends =
      test::plugins_named({"cudnn-fe", "flashinfer", "fa3", "naive", "flash"});
  int ok = test::expect_right_or_refused(runner,
                                         {{"prefill, ragged", on_gpu(ragged)},
                                          {"prefill, ragged, window 128", on_gpu(ragged, 127)}},
                                         backends);
  backends.push_back(faulty.find("sink_blind"));  // uniform batches only
  ok += test::expect_right_or_refused(runner, points, backends, {"sink_blind"});
  EXPECT_GT(ok, 3);
}

}  // namespace
}  // namespace attnbench
