// MLA on the CPU: its inputs as engines hold them (prefill's narrower v; the absorbed decode's
// one latent cache whose first kv_lora_rank columns are v, a view), the bundled textbook and SDPA
// backends against the float64 reference, and the reference against the errors an MLA kernel
// makes: the rope part dropped, v read from other columns than the first 512, the scale of the
// 576-wide dot product instead of 1/sqrt(192), a two-query decode masked top-left. Each planted
// error must land above the tolerance a bf16 row of the same point gets, not only above float32's.
#include "kinds/problem_kind.hpp"
#include "gpu_support.hpp"
#include "test_support.hpp"

#include <c10/core/InferenceMode.h>

#include <cmath>
#include <iostream>

namespace attnbench {
namespace {

using test::backend;

constexpr double kExact = 1e-5;  // float32 against float64

// An MLA point as a sweep makes it (the kind derives the widths and the scale), in float32 on the
// CPU; its bf16 twin's tolerance is what a planted error must clear.
Problem mla(bool absorbed, int64_t batch, int64_t heads, int64_t seq_len, int64_t seq_len_kv,
            bool causal = true) {
  Problem p;
  p.kind = "mla";
  p.mla.absorbed = absorbed;
  p.batch = batch, p.heads = heads, p.kv_heads = absorbed ? 1 : heads;
  p.seq_len = seq_len, p.seq_len_kv = seq_len_kv;
  p.dtype = DType::f32, p.causal = causal, p.device = Device::cpu;
  kind_of(p).complete(p);
  return p;
}

double bf16_tolerance(Problem p) {
  p.dtype = DType::bf16;
  return point_tolerance(2e-2, p);  // config's bf16 base
}

// `in` with some of its tensors replaced: the inputs a wrong kernel would in effect attend over.
InputTensors with(const InputTensors& in, const at::Tensor& q, const at::Tensor& k,
                  const at::Tensor& v, double scale) {
  InputTensors out = in;
  out.q = q, out.k = k, out.v = v, out.scale = scale;
  return out;
}

TEST(Mla, PrefillInputsAreQkOf192AndVOf128) {
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(mla(false, 2, 4, 8, 8), 1);
  EXPECT_EQ(in.q.sizes(), (c10::IntArrayRef{2, 4, 8, 192}));
  EXPECT_EQ(in.k.sizes(), (c10::IntArrayRef{2, 4, 8, 192}));
  EXPECT_EQ(in.v.sizes(), (c10::IntArrayRef{2, 4, 8, 128}));
  EXPECT_TRUE(in.v.is_contiguous());
  EXPECT_DOUBLE_EQ(in.scale, 1 / std::sqrt(192.0));
  EXPECT_EQ(output_sizes(in), (std::vector<int64_t>{2, 4, 8, 128}));
}

TEST(Mla, TheAbsorbedCacheIsOneLatentHeadWhoseFirst512ColumnsAreV) {
  c10::InferenceMode guard;
  Problem p = mla(true, 3, 16, 1, 70);
  p.kv_layout = KvLayout::paged, p.page_size = 64, p.page_order = PageOrder::shuffled;
  p.kv_lens = {70, 5, 64};
  const InputTensors in = make_inputs(p, 2);
  EXPECT_EQ(in.q.sizes(), (c10::IntArrayRef{3, 16, 576}));
  EXPECT_EQ(in.k.sizes(), (c10::IntArrayRef{2 + 1 + 1, 64, 1, 576}));  // [pages, page, 1, 576]
  EXPECT_EQ(in.v.sizes(), (c10::IntArrayRef{4, 64, 1, 512}));
  // A view of the cache, not a copy: the same memory, k's strides, its first 512 columns.
  EXPECT_EQ(in.v.data_ptr(), in.k.data_ptr());
  EXPECT_EQ(in.v.strides(), in.k.strides());
  EXPECT_TRUE(at::equal(in.v, in.k.narrow(-1, 0, 512)));
  EXPECT_DOUBLE_EQ(in.scale, 1 / std::sqrt(192.0));
}

// Every layout holds v as the view: uniform, packed (ragged), paged, and fp8 under k's scale.
TEST(Mla, EveryLayoutHoldsVAsAViewOfTheCache) {
  c10::InferenceMode guard;
  Problem ragged = mla(true, 3, 4, 1, 40);
  ragged.kv_lens = {40, 7, 23};
  // One query head: q's 576 values stay below the cap CPU's bf16 draw has (|x| <= 3.33, which a
  // cache of thousands reaches), so q's scale differs from the cache's.
  Problem fp8 = mla(true, 1, 1, 1, 400);
  fp8.dtype = DType::fp8_e4m3;
  for (const Problem& p : {mla(true, 2, 4, 1, 40), ragged, fp8}) {
    const InputTensors in = make_inputs(p, 12);
    EXPECT_EQ(in.v.data_ptr(), in.k.data_ptr()) << point_id(p);
    EXPECT_EQ(in.v.size(-1), 512) << point_id(p);
    auto bits = [](const at::Tensor& t) {  // fp8 has no equality in ATen: compare its bytes
      return t.scalar_type() == at::kFloat8_e4m3fn ? t.view(at::kByte) : t;
    };
    EXPECT_TRUE(at::equal(bits(in.v), bits(in.k.narrow(-1, 0, 512)))) << point_id(p);
    EXPECT_EQ(in.v_scale, in.k_scale) << point_id(p);
  }
  const InputTensors packed = make_inputs(ragged, 12);
  EXPECT_EQ(packed.k.sizes(), (c10::IntArrayRef{40 + 7 + 23, 1, 576}));
  // fp8: the cache quantized once, v under its scale; q with a scale of its own (the values drawn
  // so that they differ: v under q's scale would be caught).
  const InputTensors quantized = make_inputs(fp8, 12);
  EXPECT_EQ(quantized.k.scalar_type(), at::kFloat8_e4m3fn);
  ASSERT_NE(quantized.q_scale, quantized.k_scale) << "draw other values";
}

TEST(Mla, TheTextbookAndMathBackendsRunBothFormsRight) {
  c10::InferenceMode guard;
  for (bool absorbed : {false, true}) {
    for (bool causal : {true, false}) {
      const Problem p = mla(absorbed, 2, 4, absorbed ? 2 : 12, 40, causal);
      const InputTensors in = make_inputs(p, 3);
      for (const char* name : {"naive", "inplace", "math"}) {
        ASSERT_TRUE(declared_support(backend(name), p).supported) << name;
        const Support s = backend(name).supports(p);
        ASSERT_TRUE(s.supported) << name << ": " << s.reason;
        const at::Tensor out = backend(name).forward(in.view());
        EXPECT_EQ(out.sizes(), at::IntArrayRef(output_sizes(in))) << name;
        EXPECT_LT(forward_error(in, out).rel_err, kExact)
            << name << (absorbed ? " absorbed" : " prefill") << (causal ? " causal" : "");
      }
    }
  }
  // A ragged prefill, padded.
  Problem r = mla(false, 3, 2, 9, 9);
  r.q_lens = {4, 9, 1}, r.kv_lens = {4, 9, 1};
  const InputTensors in = make_inputs(r, 4);
  EXPECT_LT(forward_error(in, backend("naive").forward(in.view())).rel_err, kExact);
}

TEST(Mla, TheBackwardOfThePrefillFormIsCheckedWithItsOwnWidths) {
  Problem p = mla(false, 1, 2, 6, 6);
  p.direction = Direction::bwd;
  const InputTensors in = make_inputs(p, 5);
  EXPECT_EQ(in.grad_out.sizes(), (c10::IntArrayRef{1, 2, 6, 128}));
  auto pass = backend("naive").prepare_backward(in.view());
  at::Tensor dq, dk, dv;
  pass->run(in.grad_out, dq, dk, dv);
  EXPECT_EQ(dv.sizes(), in.v.sizes());
  EXPECT_LT(backward_error(in, dq, dk, dv).rel_err, kExact);
  // dv from the wrong columns of the output's gradient: caught.
  at::Tensor wrong_dv = dv.roll(1, -1);
  EXPECT_GT(backward_error(in, dq, dk, wrong_dv).rel_err, bf16_tolerance(p));
}

// The planted errors, each at a decode with a long cache (where averaging over many keys shrinks
// differences most) and in the prefill form where it applies.
TEST(Mla, TheRopePartDroppedIsCaught) {
  c10::InferenceMode guard;
  for (bool absorbed : {true, false}) {
    const Problem p = mla(absorbed, 2, 8, absorbed ? 1 : 64, 2048);
    const InputTensors in = make_inputs(p, 6);
    const int64_t width = p.head_dim, rope = p.mla.qk_rope_head_dim;
    at::Tensor q = in.q.clone();
    q.narrow(-1, width - rope, rope).zero_();  // q·k over the nope (or latent) part alone
    const at::Tensor out = backend("naive").forward(with(in, q, in.k, in.v, in.scale).view());
    EXPECT_GT(forward_error(in, out).rel_err, bf16_tolerance(p))
        << (absorbed ? "absorbed" : "prefill");
  }
}

TEST(Mla, VFromOtherColumnsThanTheFirst512IsCaught) {
  c10::InferenceMode guard;
  const Problem p = mla(true, 2, 8, 1, 2048);
  const InputTensors in = make_inputs(p, 7);
  for (int64_t shift : {64, 1}) {  // the last 512 columns; one column late
    const at::Tensor v = in.k.narrow(-1, shift, 512);
    const at::Tensor out = backend("naive").forward(with(in, in.q, in.k, v, in.scale).view());
    EXPECT_GT(forward_error(in, out).rel_err, bf16_tolerance(p)) << shift;
  }
}

TEST(Mla, TheScaleOfThe576WideProductIsCaught) {
  c10::InferenceMode guard;
  for (bool absorbed : {true, false}) {
    const Problem p = mla(absorbed, 2, 8, absorbed ? 1 : 64, 2048);
    const InputTensors in = make_inputs(p, 8);
    const double wrong = 1 / std::sqrt(static_cast<double>(absorbed ? 576 : 128));
    const at::Tensor out = backend("naive").forward(with(in, in.q, in.k, in.v, wrong).view());
    EXPECT_GT(forward_error(in, out).rel_err, bf16_tolerance(p))
        << (absorbed ? "absorbed" : "prefill");
  }
}

TEST(Mla, ATwoQueryDecodeMaskedTopLeftIsCaught) {
  c10::InferenceMode guard;
  const Problem p = mla(true, 2, 8, 2, 2048);  // multi-token prediction: 2 queries a sequence
  const InputTensors in = make_inputs(p, 9);
  ASSERT_TRUE(in.mask.defined());
  // Bottom-right: query 0 sees keys 0 .. 2046, query 1 all 2048.
  EXPECT_FALSE(in.mask[0][2046].item<bool>());
  EXPECT_TRUE(in.mask[0][2047].item<bool>());
  InputTensors top_left = in;
  top_left.mask = at::ones({2, 2048}, at::kBool).triu(1);  // query i sees keys 0 .. i
  const at::Tensor out = backend("naive").forward(top_left.view());
  EXPECT_GT(forward_error(in, out).rel_err, bf16_tolerance(p));
  // One key off at the edge, the last query seeing the key past its own: caught as well.
  InputTensors late = in;
  late.mask = in.mask.clone();
  late.mask[0][2047] = false;
  EXPECT_GT(forward_error(in, backend("naive").forward(late.view())).rel_err, 1e-3);
}

TEST(Mla, BackendsThatDoNotDeclareItRefuseItNamingTheKind) {
  const Problem p = mla(false, 1, 4, 8, 8);
  for (const char* name : {"flash"}) {
    const Support s = declared_support(backend(name), p);
    EXPECT_FALSE(s.supported) << name;
    EXPECT_EQ(s.reason, std::string(name) + " does not run kind mla (it declares attention)");
  }
  for (const char* name : {"naive", "inplace", "math", "efficient", "cudnn"})
    EXPECT_TRUE(declared_support(backend(name), p).supported) << name;
}

// Through the runner, as a sweep measures it: a backend that does not declare the kind is refused
// before its supports() is asked (flash's would say "a CUDA kernel" of this CPU point).
TEST(Mla, TheRunnerRefusesAnUndeclaredKindBeforeSupports) {
  test::MeasuringRunner runner(test::host(), test::correctness_options());
  const Problem p = mla(false, 1, 2, 8, 8);
  const BackendRecords flash = runner.measure({p, point_id(p)}, *test::plugins().find("flash"));
  ASSERT_FALSE(flash.rows.empty());
  EXPECT_EQ(flash.rows[0].status, Status::unsupported);
  EXPECT_EQ(flash.rows[0].reason, "flash does not run kind mla (it declares attention)");
  const BackendRecords naive = runner.measure({p, point_id(p)}, *test::plugins().find("naive"));
  ASSERT_FALSE(naive.rows.empty());
  EXPECT_EQ(naive.rows[0].status, Status::ok) << naive.rows[0].reason;
}

// On a GPU: every backend that declares MLA, at both forms, through the runner as a sweep runs it:
// `ok` within the bf16 tolerance, or `unsupported` with the kernel's or the plugin's reason.
// What each said is printed (results/<card>/mla/tests.txt keeps it).
TEST(GpuMla, EveryBackendThatDeclaresItIsRightOrSaysWhyNot) {
  REQUIRE_CUDA();
  test::MeasuringRunner runner(test::host(), test::correctness_options());
  auto on_gpu = [](Problem p) {
    p.dtype = DType::bf16, p.device = Device::cuda;
    return p;
  };
  Problem paged = mla(true, 4, 16, 1, 4096);
  paged.kv_layout = KvLayout::paged, paged.page_size = 64, paged.page_order = PageOrder::shuffled;
  paged.kv_lens = {4096, 1000, 3000, 64};
  Problem ragged = mla(false, 3, 16, 512, 512);
  ragged.q_lens = ragged.kv_lens = {512, 100, 333};
  const std::vector<std::pair<const char*, Problem>> points = {
      {"prefill causal", on_gpu(mla(false, 1, 16, 1024, 1024))},
      {"prefill ragged", on_gpu(ragged)},
      {"absorbed decode, contiguous", on_gpu(mla(true, 4, 16, 1, 4096))},
      {"absorbed decode, 2 queries", on_gpu(mla(true, 4, 16, 2, 4096))},
      {"absorbed decode, paged 64", on_gpu(paged)},
  };
  const int ok = test::expect_right_or_refused(
      runner, points,
      test::plugins_named({"cudnn-fe", "fa3", "flashinfer", "cudnn", "efficient", "math", "flash"}));
  EXPECT_GT(ok, 0);
}

}  // namespace
}  // namespace attnbench
