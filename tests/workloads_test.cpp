// The workloads beyond square forward attention, on the CPU: grouped-query heads, a query block
// against a longer key sequence (causal aligned bottom-right), decode, and the backward pass. The
// plugins are checked against the float64 reference, and the reference against wrong answers
// made by hand, so that neither can drift into agreeing on the wrong semantics.
#include <attnbench/sdpa/autograd_backward.hpp>
#include <attnbench/sdpa/textbook_attention.hpp>
#include "measure/op_counter.hpp"
#include "kinds/problem_kind.hpp"
#include "test_support.hpp"

#include <c10/core/InferenceMode.h>

#include <cmath>

namespace attnbench {
namespace {

using test::backend;
using test::backward;
using test::problem;
using test::with_kv;

Problem f32_cpu(int64_t heads, int64_t kv_heads, int64_t seq, int64_t seq_kv, bool causal) {
  return with_kv(problem(2, heads, seq, 16, DType::f32, causal, Device::cpu), kv_heads, seq_kv);
}

// The textbook attention with another mask or other k, v: the wrong answers.
at::Tensor attention_with(const InputTensors& in, const at::Tensor* mask, const at::Tensor& k,
                          const at::Tensor& v) {
  return textbook_attention(Inputs{in.problem, in.q, k, v, mask, in.scale}, /*mask_in_place=*/false);
}

TEST(Workloads, CausalMaskIsAlignedBottomRight) {
  const InputTensors in = make_inputs(f32_cpu(1, 1, 3, 5, true), 1);
  ASSERT_EQ(in.mask.sizes(), (c10::IntArrayRef{3, 5}));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 5; ++j)  // query i sees keys 0 .. i + 2
      EXPECT_EQ(in.mask[i][j].item<bool>(), j > i + 2) << i << "," << j;
  EXPECT_EQ(in.k.sizes(), (c10::IntArrayRef{2, 1, 5, 16}));
}

TEST(Workloads, ReferenceFollowsBottomRightAndCatchesTopLeft) {
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(f32_cpu(2, 2, 24, 40, true), 2);
  for (const char* name : {"naive", "inplace", "math"})
    EXPECT_LT(forward_error(in, backend(name).forward(in.view())).rel_err, 1e-5) << name;
  const at::Tensor top_left = at::ones({24, 40}, in.mask.options()).triu(1);
  EXPECT_GT(forward_error(in, attention_with(in, &top_left, in.k, in.v)).rel_err, 1e-2);
}

TEST(Workloads, DecodeWithACausalMaskSeesTheWholeCache) {
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(f32_cpu(4, 2, 1, 300, true), 3);
  const at::Tensor out = backend("math").forward(in.view());
  EXPECT_LT(forward_error(in, out).rel_err, 1e-5);
  EXPECT_TRUE(at::allclose(out, attention_with(in, nullptr, in.k, in.v), 1e-5, 1e-6));
  // Top-left, the one query would see only the first key.
  const at::Tensor first_key_only = at::ones({1, 300}, in.mask.options()).triu(1);
  EXPECT_GT(forward_error(in, attention_with(in, &first_key_only, in.k, in.v)).rel_err, 1e-2);
}

TEST(Workloads, GroupedQueryHeadsShareTheirKvHeadInOrder) {
  c10::InferenceMode guard;
  for (bool causal : {true, false}) {
    const InputTensors in = make_inputs(f32_cpu(6, 2, 33, 47, causal), 4);
    for (const char* name : {"naive", "inplace", "math"})
      EXPECT_LT(forward_error(in, backend(name).forward(in.view())).rel_err, 1e-5)
          << name << (causal ? " causal" : " full");
    // Query head h reads kv head h / 3; tiling (h % 2) is a different, wrong, attention.
    const at::Tensor* mask = causal ? &in.mask : nullptr;
    EXPECT_GT(forward_error(in, attention_with(in, mask, in.k.repeat({1, 3, 1, 1}),
                                               in.v.repeat({1, 3, 1, 1})))
                  .rel_err,
              1e-2);
  }
}

// naive and inplace expand k and v for grouped-query heads: the copies show in the counts.
TEST(Workloads, TextbookAttentionExpandsKvForGroupedQueryHeads) {
  c10::InferenceMode guard;
  const InputTensors mha = make_inputs(f32_cpu(4, 4, 32, 32, true), 5);
  const InputTensors gqa = make_inputs(f32_cpu(4, 1, 32, 32, true), 5);
  const OpCounts plain = count_aten_ops([&] { backend("inplace").forward(mha.view()); });
  const OpCounts grouped = count_aten_ops([&] { backend("inplace").forward(gqa.view()); });
  EXPECT_EQ(grouped.top_level,
            (std::vector<std::string>{"repeat_interleave", "repeat_interleave", "matmul", "mul",
                                      "masked_fill_", "softmax", "matmul"}));
  EXPECT_EQ(plain.copies, 0);
  EXPECT_EQ(grouped.copies, 2);
}

struct BackwardCase {
  const char* backend;
  int64_t heads, kv_heads, seq, seq_kv;
  bool causal;
};

void PrintTo(const BackwardCase& c, std::ostream* os) { *os << c.backend; }

class BackwardTest : public ::testing::TestWithParam<BackwardCase> {};

TEST_P(BackwardTest, GradientsMatchFloat64Autograd) {
  const BackwardCase& c = GetParam();
  const InputTensors in =
      make_inputs(backward(f32_cpu(c.heads, c.kv_heads, c.seq, c.seq_kv, c.causal)), 6);
  ASSERT_TRUE(in.grad_out.defined());
  const auto pass = backend(c.backend).prepare_backward(in.view());
  ASSERT_TRUE(pass);
  at::Tensor dq, dk, dv;
  pass->run(in.grad_out, dq, dk, dv);
  const ReferenceError e = backward_error(in, dq, dk, dv);
  EXPECT_LT(e.rel_err, 1e-5) << c.backend << ": " << e.worst;
  // The timed call repeats: the same gradients each time.
  at::Tensor dq2, dk2, dv2;
  pass->run(in.grad_out, dq2, dk2, dv2);
  EXPECT_TRUE(dq.equal(dq2) && dk.equal(dk2) && dv.equal(dv2));
}

INSTANTIATE_TEST_SUITE_P(NaiveInplaceMath, BackwardTest,
                         ::testing::Values(BackwardCase{"naive", 2, 2, 40, 40, true},
                                           BackwardCase{"inplace", 4, 2, 24, 56, true},
                                           BackwardCase{"math", 4, 2, 24, 56, true},
                                           BackwardCase{"math", 3, 1, 1, 70, false},
                                           BackwardCase{"naive", 6, 3, 17, 17, false}),
                         [](const auto& info) {
                           const BackwardCase& c = info.param;
                           return std::string(c.backend) + "_h" + std::to_string(c.heads) + "kv" +
                                  std::to_string(c.kv_heads) + "_s" + std::to_string(c.seq) +
                                  "skv" + std::to_string(c.seq_kv) +
                                  (c.causal ? "_causal" : "_full");
                         });

// The reference's query blocks (of block_scores / (group x seq_len_kv) rows) give the same
// gradients as one block: blocks of 1, 3 and 7 rows (uneven last block) against all rows at once,
// and a wrong dq row in the last block is still caught.
TEST(Workloads, BackwardReferenceInQueryBlocksEqualsOneBlock) {
  const InputTensors in = make_inputs(backward(f32_cpu(4, 2, 20, 36, true)), 8);
  at::Tensor dq, dk, dv;
  backend("naive").prepare_backward(in.view())->run(in.grad_out, dq, dk, dv);
  const ReferenceError whole = backward_error(in, dq, dk, dv);
  EXPECT_LT(whole.rel_err, 1e-5);
  const int64_t group = 2, seq_kv = 36;
  for (int64_t rows : {1, 3, 7}) {
    const ReferenceError blocked = backward_error(in, dq, dk, dv, rows * group * seq_kv);
    EXPECT_NEAR(blocked.rel_err, whole.rel_err, 1e-12) << rows << " rows a block";
    EXPECT_EQ(blocked.worst, whole.worst) << rows;
  }
  at::Tensor bad_dq = dq.clone();
  bad_dq[0][0][19].mul_(2);  // the last query row: the last, shorter block
  EXPECT_GT(backward_error(in, bad_dq, dk, dv, 7 * group * seq_kv).rel_err, 1e-3);
  EXPECT_EQ(backward_error(in, bad_dq, dk, dv, 7 * group * seq_kv).worst, "dq");
}

TEST(Workloads, BackwardReferenceNamesTheWrongGradient) {
  const InputTensors in = make_inputs(backward(f32_cpu(4, 2, 16, 32, true)), 7);
  at::Tensor dq, dk, dv;
  backend("naive").prepare_backward(in.view())->run(in.grad_out, dq, dk, dv);
  EXPECT_LT(backward_error(in, dq, dk, dv).rel_err, 1e-5);
  // dk of a kv head sums over its group: half of it (one query head of two) is wrong.
  const ReferenceError half = backward_error(in, dq, dk * 0.5, dv);
  EXPECT_GT(half.rel_err, 0.4);
  EXPECT_EQ(half.worst, "dk");
  at::Tensor bad_dv = dv.clone();
  bad_dv[1][1][31][0] = std::numeric_limits<float>::quiet_NaN();
  const ReferenceError nan = backward_error(in, dq, dk, bad_dv);
  EXPECT_TRUE(std::isnan(nan.rel_err));
  EXPECT_EQ(nan.worst, "dv");
  EXPECT_THROW(backward_error(in, dq, dk.narrow(2, 0, 16), dv), std::runtime_error);
}

TEST(Workloads, BackwardOfANonDifferentiableForwardIsUnsupported) {
  const InputTensors in = make_inputs(backward(f32_cpu(2, 2, 8, 8, false)), 8);
  EXPECT_THROW(autograd_backward(in.view(), [](const Inputs& i) { return i.q.detach(); }),
               Unsupported);
  c10::InferenceMode guard;
  EXPECT_THROW(autograd_backward(in.view(), [](const Inputs& i) { return i.q * 1; }),
               std::logic_error);
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// fp8 inputs: each tensor's scale maps its largest magnitude to fp8's largest (448), and the
// output is bf16, or fp8 holding out / v_scale (backend.hpp). The check reads each as that and
// catches the other readings.
TEST(Workloads, Fp8OutputIsBf16OrFp8HoldingOutOverTheVScale) {
  c10::InferenceMode inference;
  const Problem p = problem(2, 2, 32, 16, DType::fp8_e4m3, false, Device::cpu);
  const InputTensors in = make_inputs(p, 11);
  for (const auto& [t, scale] :
       {std::pair{&in.q, in.q_scale}, {&in.k, in.k_scale}, {&in.v, in.v_scale}}) {
    EXPECT_EQ(t->scalar_type(), at::kFloat8_e4m3fn);
    EXPECT_NEAR(t->to(at::kFloat).abs().max().item<double>(), 448, 1e-9);
    EXPECT_GT(scale, 0.001);
    EXPECT_LT(scale, 0.05);  // randn's largest of a few thousand values is 3-5: 3.5 / 448 ~ 0.008
  }
  const at::Tensor q = dequantized(in.q, in.q_scale), k = dequantized(in.k, in.k_scale),
                   v = dequantized(in.v, in.v_scale);
  const at::Tensor out = at::matmul(at::softmax(at::matmul(q, k.transpose(-2, -1)) * in.scale, -1), v);
  EXPECT_LT(forward_error(in, out.to(at::kBFloat16)).rel_err, 0.01);
  EXPECT_LT(forward_error(in, (out / in.v_scale).to(at::kFloat8_e4m3fn)).rel_err, 0.1);
  // fp8 holding the output itself reads as out x v_scale: off by all of it.
  EXPECT_GT(forward_error(in, out.to(at::kFloat8_e4m3fn)).rel_err, 0.9);
  // bf16 divided as if it were fp8: off too.
  EXPECT_GT(forward_error(in, (out / in.v_scale).to(at::kBFloat16)).rel_err, 0.9);
  try {
    forward_error(in, out.to(at::kFloat));
    ADD_FAILURE() << "an fp32 output of fp8 inputs was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("fp8 inputs take a bf16 or float8_e4m3fn output"),
              std::string::npos)
        << e.what();
  }
}

// A mixed batch (two prefills and four decodes in one call): the textbook backends are right, and
// decode rows masked as a prefill's (top-left: the one query sees key 0 alone) are caught.
TEST(Workloads, AMixedBatchsDecodeRowsMaskedAsPrefillAreCaught) {
  c10::InferenceMode guard;
  Problem p = f32_cpu(4, 2, 48, 300, true);
  p.batch = 6;
  p.seq_lens = "2*48 + 4*1", p.seq_lens_kv = "2*48 + 4*uniform(100,300)";
  p.q_lens = {48, 48, 1, 1, 1, 1}, p.kv_lens = {48, 48, 100, 300, 217, 150};
  const InputTensors in = make_inputs(p, 3);
  const at::Tensor out = backend("naive").forward(in.view());
  ASSERT_LT(forward_error(in, out).rel_err, 1e-5);
  at::Tensor wrong = out.clone();  // [total_q, heads, d]
  const at::Tensor cu_kv = in.cu_seqlens_kv.cpu();
  for (int64_t b = 2; b < 6; ++b) {
    const int64_t row = 2 * 48 + (b - 2), first_key = cu_kv[b].item<int64_t>();
    wrong[row] = in.v[first_key].repeat_interleave(2, 0);  // each kv head's v for its 2 q heads
  }
  Problem bf16 = p;
  bf16.dtype = DType::bf16;
  EXPECT_GT(forward_error(in, wrong).rel_err,
            point_tolerance(default_tolerances().at(DType::bf16), bf16));
}

// fp8 gradients are judged like any (fp8 has no isfinite of its own: an fp8 backward read
// "isfinite not implemented" and the harness blamed the backend): zeros are far off, a NaN is
// named.
TEST(Workloads, AnFp8BackwardIsJudgedNotAnError) {
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(backward(problem(1, 2, 16, 16, DType::fp8_e4m3, true, Device::cpu)), 4);
  ASSERT_EQ(in.q.scalar_type(), at::kFloat8_e4m3fn);
  const at::Tensor dq = at::zeros_like(in.q), dk = at::zeros_like(in.k), dv = at::zeros_like(in.v);
  EXPECT_GT(backward_error(in, dq, dk, dv).rel_err, 0.5);
  at::Tensor nan_dk = dk.clone();
  poison(nan_dk);
  const ReferenceError e = backward_error(in, dq, nan_dk, dv);
  EXPECT_TRUE(std::isnan(e.rel_err));
  EXPECT_EQ(e.worst, "dk");
}

}  // namespace
}  // namespace attnbench
