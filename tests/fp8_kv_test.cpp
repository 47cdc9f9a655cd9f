// An fp8 KV cache under bf16 or fp16 queries (kv_dtype: fp8_e4m3), how engines serve decode: the
// inputs (k and v quantized, a scale each and v's apart from k's; q and the output untouched; MLA's
// one latent cache with one scale and v still its view), the textbook backends that dequantize it
// inside the call, the reference against the errors a kernel makes with the scales (v under k's,
// k under v's, none, the latent cache's twice), the refusal of every backend that does not declare
// it, and the row's scales. On a GPU: every backend at each form, right or saying why not.
#include "kinds/problem_kind.hpp"
#include "gpu_support.hpp"
#include "test_support.hpp"

#include <attnbench/sdpa/forced_sdpa.hpp>

#include <c10/core/InferenceMode.h>

#include <iostream>

namespace attnbench {
namespace {

using test::backend;

// A decode against a long cache (averaging over many keys shrinks differences most), or a short
// prefill; the cache fp8 under `dtype` queries.
Problem attention(DType dtype, int64_t seq_len = 1, int64_t seq_len_kv = 2048) {
  Problem p = test::with_kv(test::problem(2, 8, seq_len, 128, dtype, true, Device::cpu), 2,
                            seq_len_kv);
  p.kv_dtype = DType::fp8_e4m3;
  return p;
}

// The same with one field changed.
Problem full(Problem p) {
  p.causal = false;
  return p;
}
Problem with_sinks(Problem p) {
  p.sinks = true;
  return p;
}

Problem mla_decode(DType dtype, int64_t seq_len_kv = 2048) {
  Problem p;
  p.kind = "mla";
  p.mla.absorbed = true;
  p.batch = 2, p.heads = 8, p.kv_heads = 1, p.seq_len = 1, p.seq_len_kv = seq_len_kv;
  p.dtype = dtype, p.causal = true, p.device = Device::cpu;
  p.kv_dtype = DType::fp8_e4m3;
  kind_of(p).complete(p);
  return p;
}

// The tolerance a row of the point gets (config's base for q's dtype).
double tolerance(const Problem& p) { return point_tolerance(default_tolerances().at(p.dtype), p); }

TEST(Fp8Kv, KAndVAreQuantizedWithAScaleEachAndQIsNot) {
  c10::InferenceMode guard;
  for (DType dtype : {DType::bf16, DType::f16}) {
    const InputTensors in = make_inputs(attention(dtype), 1);
    EXPECT_EQ(in.q.scalar_type(), dtype == DType::bf16 ? at::kBFloat16 : at::kHalf);
    EXPECT_EQ(in.k.scalar_type(), at::kFloat8_e4m3fn);
    EXPECT_EQ(in.v.scalar_type(), at::kFloat8_e4m3fn);
    EXPECT_EQ(in.q_scale, 1);
    // Each scale maps its tensor's largest magnitude to fp8's 448.
    EXPECT_NEAR(in.k.to(at::kFloat).abs().max().item<double>(), 448, 1e-9);
    EXPECT_NEAR(in.v.to(at::kFloat).abs().max().item<double>(), 448, 1e-9);
    // v drawn 4x wider: its scale far from k's, so one taken for the other is caught.
    EXPECT_GT(in.v_scale / in.k_scale, 3) << in.v_scale << " / " << in.k_scale;
  }
  // Packed and paged caches alike.
  Problem paged = attention(DType::bf16);
  paged.kv_layout = KvLayout::paged, paged.page_size = 16, paged.page_order = PageOrder::shuffled;
  paged.kv_lens = {2048, 100};
  const InputTensors in = make_inputs(paged, 2);
  EXPECT_EQ(in.k.scalar_type(), at::kFloat8_e4m3fn);
  EXPECT_EQ(in.v.scalar_type(), at::kFloat8_e4m3fn);
  EXPECT_EQ(in.q.scalar_type(), at::kBFloat16);
}

TEST(Fp8Kv, TheLatentCacheIsOneTensorUnderOneScaleWithVItsView) {
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(mla_decode(DType::bf16), 3);
  EXPECT_EQ(in.k.scalar_type(), at::kFloat8_e4m3fn);
  EXPECT_EQ(in.k.size(-1), 576);
  EXPECT_EQ(in.v.size(-1), 512);
  EXPECT_EQ(in.v.data_ptr(), in.k.data_ptr());  // a view, not a copy
  EXPECT_EQ(in.v_scale, in.k_scale);
  EXPECT_EQ(in.q.scalar_type(), at::kBFloat16);
  EXPECT_EQ(output_sizes(in), (std::vector<int64_t>{2, 8, 1, 512}));
}

// The textbook backends dequantize the cache to q's dtype in the call, and say so in the feed.
TEST(Fp8Kv, TheTextbookBackendsRunItRightAndSayHow) {
  c10::InferenceMode guard;
  Problem ragged = attention(DType::bf16, 5, 40);
  ragged.q_lens = {5, 2}, ragged.kv_lens = {40, 7};
  const std::vector<std::pair<const char*, Problem>> points = {
      {"bf16 decode", attention(DType::bf16)},
      {"fp16 decode", attention(DType::f16)},
      {"bf16 prefill, full", full(attention(DType::bf16, 24, 24))},
      {"ragged", ragged},
      {"mla absorbed", mla_decode(DType::bf16)},
      {"mla absorbed fp16", mla_decode(DType::f16)},
      {"fp16 decode with sinks", with_sinks(attention(DType::f16, 1, 1024))},
  };
  for (const auto& [what, p] : points) {
    const InputTensors in = make_inputs(p, 4);
    for (const char* name : {"naive", "inplace"}) {
      ASSERT_TRUE(declared_support(backend(name), p).supported) << name << " " << what;
      const Support s = backend(name).supports(p);
      ASSERT_TRUE(s.supported) << name << " " << what << ": " << s.reason;
      EXPECT_NE(s.feed.find(sdpa::kDequantizedFeed), std::string::npos) << s.feed;
      const at::Tensor out = backend(name).forward(in.view());
      EXPECT_EQ(out.scalar_type(), in.q.scalar_type()) << name << " " << what;
      EXPECT_LT(forward_error(in, out).rel_err, tolerance(p)) << name << " " << what;
    }
  }
}

// The scales a kernel gets wrong, planted through the textbook backend: each lands far above the
// tolerance of its point's row.
TEST(Fp8Kv, AScaleTakenForAnotherOrIgnoredIsCaught) {
  c10::InferenceMode guard;
  for (DType dtype : {DType::bf16, DType::f16}) {
    const Problem p = attention(dtype);
    const InputTensors in = make_inputs(p, 5);
    auto planted = [&](double k_scale, double v_scale) {
      InputTensors wrong = in;
      wrong.k_scale = k_scale, wrong.v_scale = v_scale;
      return forward_error(in, backend("naive").forward(wrong.view())).rel_err;
    };
    ASSERT_LT(planted(in.k_scale, in.v_scale), tolerance(p));
    EXPECT_GT(planted(in.k_scale, in.k_scale), tolerance(p)) << "v under k's scale";
    EXPECT_GT(planted(in.v_scale, in.v_scale), tolerance(p)) << "k under v's scale";
    EXPECT_GT(planted(1, 1), tolerance(p)) << "the scales ignored";
    EXPECT_GT(planted(in.k_scale, 1), tolerance(p)) << "v's scale ignored";
    EXPECT_GT(planted(1, in.v_scale), tolerance(p)) << "k's scale ignored";
  }
  const Problem m = mla_decode(DType::bf16);
  const InputTensors in = make_inputs(m, 6);
  auto planted = [&](double scale) {
    InputTensors wrong = in;
    wrong.k_scale = wrong.v_scale = scale;
    return forward_error(in, backend("naive").forward(wrong.view())).rel_err;
  };
  ASSERT_LT(planted(in.k_scale), tolerance(m));
  EXPECT_GT(planted(1), tolerance(m)) << "the latent cache's scale ignored";
  EXPECT_GT(planted(in.k_scale * in.k_scale), tolerance(m)) << "applied twice";
}

TEST(Fp8Kv, BackendsThatDoNotDeclareItRefuseItNamingTheVariant) {
  test::expect_undeclared(attention(DType::bf16),
                          {"flash", "efficient", "cudnn", "math", "cudnn-fe", "fa3"},
                          "an fp8 KV cache");
  // flash is refused for MLA by its kind first.
  test::expect_undeclared(mla_decode(DType::bf16), {"efficient", "cudnn", "math", "cudnn-fe", "fa3"},
                          "an fp8 KV cache");
}

// Through the runner: the row records k's and v's scales (q has none of its own) and the feed.
TEST(Fp8Kv, TheRowRecordsTheCachesScalesAndNotQs) {
  test::MeasuringRunner runner(test::host(), test::correctness_options());
  const Problem p = attention(DType::bf16, 1, 256);
  const BackendRecords r = runner.measure({p, point_id(p)}, *test::plugins().find("naive"));
  ASSERT_FALSE(r.rows.empty());
  const Row& row = r.rows[0];
  EXPECT_EQ(row.status, Status::ok) << row.reason;
  EXPECT_FALSE(row.fp8_scale_q.has_value());
  ASSERT_TRUE(row.fp8_scale_k && row.fp8_scale_v);
  EXPECT_GT(*row.fp8_scale_v / *row.fp8_scale_k, 3);
  EXPECT_EQ(row.feed, sdpa::kDequantizedFeed);
}

// On a GPU: every backend at each form, `ok` within the row's tolerance or `unsupported` with the
// reason; what each said is printed.
TEST(GpuFp8Kv, EveryBackendIsRightOrSaysWhyNot) {
  REQUIRE_CUDA();
  test::MeasuringRunner runner(test::host(), test::correctness_options());
  auto on_gpu = [](Problem p) {
    p.device = Device::cuda;
    return p;
  };
  Problem paged_mla = mla_decode(DType::bf16, 4096);
  paged_mla.kv_layout = KvLayout::paged, paged_mla.page_size = 64;
  paged_mla.page_order = PageOrder::shuffled, paged_mla.kv_lens = {4096, 1000};
  Problem paged = attention(DType::bf16, 1, 4096);
  paged.kv_layout = KvLayout::paged, paged.page_size = 16;
  paged.page_order = PageOrder::shuffled, paged.kv_lens = {4096, 1000};
  const std::vector<std::pair<const char*, Problem>> points = {
      {"mla absorbed, contiguous", on_gpu(mla_decode(DType::bf16, 4096))},
      {"mla absorbed, paged 64", on_gpu(paged_mla)},
      {"attention decode, contiguous", on_gpu(attention(DType::bf16, 1, 4096))},
      {"attention decode, paged 16", on_gpu(paged)},
  };
  const int ok = test::expect_right_or_refused(
      runner, points,
      test::plugins_named({"flashinfer", "fa3", "cudnn-fe", "naive", "cudnn", "flash"}));
  EXPECT_GT(ok, 1);
}

}  // namespace
}  // namespace attnbench
