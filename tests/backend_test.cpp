#include <attnbench/sdpa/forced_sdpa.hpp>
#include "base/names.hpp"
#include "kinds/problem.hpp"
#include "measure/op_counter.hpp"
#include "test_support.hpp"

#include <ATen/Context.h>
#include <c10/core/InferenceMode.h>

namespace attnbench {
namespace {

using test::backend;
using test::problem;
using test::with_kv;

struct CpuCase {
  const char* backend;
  DType dtype;
  bool causal;
  double tolerance;
};

void PrintTo(const CpuCase& c, std::ostream* os) { *os << c.backend; }

class CpuBackendTest : public ::testing::TestWithParam<CpuCase> {};

TEST_P(CpuBackendTest, MatchesTheFloat64Reference) {
  const CpuCase& c = GetParam();
  c10::InferenceMode guard;
  const Problem p = problem(2, 3, 77, 16, c.dtype, c.causal, Device::cpu);
  for (uint64_t seed : {1u, 2u}) {  // fresh inputs: the same function on any input
    const InputTensors in = make_inputs(p, seed);
    const at::Tensor out = backend(c.backend).forward(in.view());
    EXPECT_LT(forward_error(in, out).rel_err, c.tolerance) << c.backend;
  }
}

INSTANTIATE_TEST_SUITE_P(NaiveInplaceMath, CpuBackendTest,
                         ::testing::Values(CpuCase{"naive", DType::f32, true, 1e-5},
                                           CpuCase{"naive", DType::f32, false, 1e-5},
                                           CpuCase{"inplace", DType::f32, true, 1e-5},
                                           CpuCase{"inplace", DType::bf16, true, 2e-2},
                                           CpuCase{"math", DType::f32, true, 1e-5},
                                           CpuCase{"math", DType::f32, false, 1e-5},
                                           CpuCase{"math", DType::bf16, true, 2e-2}),
                         [](const auto& info) {
                           return std::string(info.param.backend) + "_" +
                                  (info.param.dtype == DType::f32 ? "fp32" : "bf16") +
                                  (info.param.causal ? "_causal" : "_full");
                         });

TEST(CpuBackends, ReferenceCatchesAWrongOutput) {
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(problem(1, 2, 64, 16, DType::f32, true, Device::cpu), 3);
  at::Tensor out = backend("naive").forward(in.view());
  EXPECT_LT(forward_error(in, out).rel_err, 1e-5);
  out[0][1][63] += 0.1;  // one wrong row (the last, which sees every key) is enough
  EXPECT_GT(forward_error(in, out).rel_err, 1e-2);
  out[0][0][0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(forward_error(in, out).rel_err));
}

// The tolerance grows with the reductions so that correct bf16 arithmetic passes at head_dim 128
// (naive rounds the unscaled scores to bf16), while a mask off by one key or a dropped softmax
// scale still fails it by far.
TEST(CpuBackends, ScaledToleranceTakesCorrectBf16AndCatchesPlantedErrors) {
  c10::InferenceMode guard;
  const Problem p = problem(2, 4, 256, 128, DType::bf16, true, Device::cpu);
  const double tol = scaled_tolerance(default_tolerances().at(DType::bf16), p);
  EXPECT_DOUBLE_EQ(tol, 0.02 * std::sqrt(2.0));
  for (uint64_t seed : {7u, 8u, 9u}) {
    const InputTensors in = make_inputs(p, seed);
    const double good = forward_error(in, backend("naive").forward(in.view())).rel_err;
    EXPECT_LT(good, tol) << seed;
    // Off by one: every query sees one key more than causal allows.
    const at::Tensor wider = at::ones_like(in.mask).triu(2);
    const Inputs off_by_one{in.problem, in.q, in.k, in.v, &wider, in.scale};
    EXPECT_GT(forward_error(in, backend("naive").forward(off_by_one)).rel_err, 10 * tol) << seed;
    const Inputs no_scale{in.problem, in.q, in.k, in.v, &in.mask, 1.0};
    EXPECT_GT(forward_error(in, backend("naive").forward(no_scale)).rel_err, 10 * tol) << seed;
  }
}

// The study: naive is five ops and copies the scores in masked_fill; inplace is the same five ops
// with masked_fill_ and no copy.
TEST(CpuBackends, NaiveCopiesTheScoresAndInplaceDoesNot) {
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(problem(1, 2, 64, 16, DType::f32, true, Device::cpu), 4);
  const OpCounts naive = count_aten_ops([&] { backend("naive").forward(in.view()); });
  const OpCounts inplace = count_aten_ops([&] { backend("inplace").forward(in.view()); });
  EXPECT_EQ(naive.top_level,
            (std::vector<std::string>{"matmul", "mul", "masked_fill", "softmax", "matmul"}));
  EXPECT_EQ(inplace.top_level,
            (std::vector<std::string>{"matmul", "mul", "masked_fill_", "softmax", "matmul"}));
  EXPECT_EQ(naive.copies, 1);
  EXPECT_EQ(inplace.copies, 0);
  EXPECT_GT(naive.nested, inplace.nested);
}

// Every bundled backend but the three ATen ones (efficient, flash, cudnn, fa3, cudnn-fe where
// built).
TEST(CpuBackends, FusedBackendsSayTheyNeedCuda) {
  const Problem p = problem(1, 1, 64, 64, DType::bf16, true, Device::cpu);
  std::vector<std::string> fused;
  for (const auto& name : split(ATTNBENCH_BUNDLED, ','))
    if (name != "naive" && name != "inplace" && name != "math") fused.push_back(name);
  ASSERT_GE(fused.size(), 4u);
  for (const auto& name : fused) {
    const Support s = backend(name).supports(p);
    EXPECT_FALSE(s.supported) << name;
    EXPECT_NE(s.reason.find("CUDA kernel"), std::string::npos) << name << ": " << s.reason;
  }
}

// fa3 loads without FlashAttention-3 (it is dlopen'ed on demand) and says how to get it.
TEST(Fa3, WithoutTheLibraryACudaPointSaysHowToInstallIt) {
  const Problem p = problem(1, 2, 128, 64, DType::bf16, true, Device::cuda);
  const Support s = backend("fa3").supports(p);
  if (s.supported) GTEST_SKIP() << "skipped: FlashAttention-3 is installed here";
  EXPECT_NE(s.reason.find("FlashAttention-3 not found (looked in "), std::string::npos) << s.reason;
  EXPECT_NE(s.reason.find("pip install fa3-fwd"), std::string::npos) << s.reason;
  EXPECT_NE(s.reason.find("ATTNBENCH_FA3_LIB"), std::string::npos) << s.reason;
}

TEST(Fa3, RefusesWhatNoFa3WheelRuns) {
  auto reason = [](Problem p) { return backend("fa3").supports(p).reason; };
  Problem p = problem(1, 2, 128, 64, DType::f32, false, Device::cuda);
  EXPECT_EQ(reason(p), "FlashAttention-3 has no fp32 kernels");
  p.dtype = DType::bf16, p.head_dim = 320;
  EXPECT_EQ(reason(p), "FlashAttention-3 needs head_dim <= 256 and a multiple of 8, not 320");
  p.head_dim = 64, p.direction = Direction::bwd;
  EXPECT_EQ(reason(p), "the FA3 wheels are built forward-only (FLASHATTENTION_DISABLE_BACKWARD)");
}

// fp8_e4m3 is for kernels written for it: fa3 and cudnn-fe take it (fa3 where its library is
// found), every other bundled backend refuses it with the reason, on the GPU as on the CPU.
TEST(Fp8, OnlyFa3AndCudnnFeTakeIt) {
  for (const auto& name : split(ATTNBENCH_BUNDLED, ',')) {
    const Problem p = problem(1, 2, 128, 64, DType::fp8_e4m3, false, Device::cuda);
    const Support s = backend(name).supports(p);
    if (name == "cudnn-fe") {
      EXPECT_TRUE(s.supported) << s.reason;
    } else if (name == "fa3") {
      EXPECT_TRUE(s.supported || s.reason.find("not found") != std::string::npos) << s.reason;
    } else {
      EXPECT_FALSE(s.supported) << name;
      EXPECT_NE(
          s.reason.find(name == "flashinfer" ? "bf16 only" : "need a kernel written for them"),
          std::string::npos)
          << name << ": " << s.reason;
    }
  }
}

// flashinfer offers the kernel instances it compiled, says which, and refuses the rest by name.
TEST(FlashInfer, SaysWhatItCompiledAndRefusesTheRest) {
  const std::vector<std::string> bundled = split(ATTNBENCH_BUNDLED, ',');
  if (std::find(bundled.begin(), bundled.end(), "flashinfer") == bundled.end())
    GTEST_SKIP() << "skipped: flashinfer not built here (no FlashInfer headers or nvcc)";
  Backend& fi = backend("flashinfer");
  EXPECT_NE(fi.description().find("head_dim 64/128"), std::string::npos) << fi.description();
  auto reason = [&](Problem p) { return fi.supports(p).reason; };
  Problem p = problem(2, 8, 512, 128, DType::bf16, true, Device::cuda);
  EXPECT_TRUE(fi.supports(p).supported);
  EXPECT_TRUE(fi.supports(with_kv(p, 2, 1024)).supported);  // GQA, a query block vs a cache
  Problem decode = with_kv(problem(8, 32, 1, 128, DType::bf16, false, Device::cuda), 8, 4096);
  EXPECT_TRUE(fi.supports(decode).supported);
  decode.heads = 5, decode.kv_heads = 1;  // a group of 5: its decode kernel lacks it
  decode.head_dim = 64;                    // and no served-path instance takes d64 without sinks
  EXPECT_NE(reason(decode).find("nor a decode kernel for GQA groups of 5"), std::string::npos)
      << reason(decode);
  p.head_dim = 256;
  EXPECT_NE(reason(p).find("no FlashInfer prefill kernel compiled for head_dim 256 causal"),
            std::string::npos)
      << reason(p);
  p.head_dim = 128, p.dtype = DType::f16;
  EXPECT_EQ(reason(p), "this plugin compiles FlashInfer's kernels for bf16 only");
  p.dtype = DType::bf16, p.direction = Direction::bwd;
  EXPECT_EQ(reason(p), "FlashInfer has no backward pass (an inference library)");
}

// The head_dim limits of the fused Hopper backends, on both sides of each bound: up to 256 and a
// multiple of 8 (cudnn-fe's fp8: of 16). A head_dim a plugin takes passes on to its next check,
// whose reason names no head_dim.
TEST(HeadDimLimits, Fa3AndCudnnFeTakeMultiplesOfEightUpTo256) {
  const std::vector<std::string> bundled = split(ATTNBENCH_BUNDLED, ',');
  for (const std::string name : {"fa3", "cudnn-fe"}) {
    if (std::find(bundled.begin(), bundled.end(), name) == bundled.end()) continue;
    auto head_dim_refused = [&](int64_t d, DType dtype = DType::bf16) {
      const Support s =
          backend(name).supports(problem(1, 2, 128, d, dtype, false, Device::cuda));
      return !s.supported && s.reason.find("head_dim") != std::string::npos;
    };
    for (int64_t d : {8, 16, 64, 96, 128, 248, 256})
      EXPECT_FALSE(head_dim_refused(d)) << name << " refused head_dim " << d;
    for (int64_t d : {4, 12, 60, 130, 260, 264, 320, 512})
      EXPECT_TRUE(head_dim_refused(d)) << name << " took head_dim " << d;
    const Support s = backend(name).supports(problem(1, 2, 128, 264, DType::bf16, false, Device::cuda));
    EXPECT_NE(s.reason.find("head_dim <= 256 and a multiple of 8, not 264"), std::string::npos)
        << name << ": " << s.reason;
    if (name == std::string("cudnn-fe")) {
      EXPECT_FALSE(head_dim_refused(16, DType::fp8_e4m3));
      EXPECT_FALSE(head_dim_refused(128, DType::fp8_e4m3));
      EXPECT_TRUE(head_dim_refused(24, DType::fp8_e4m3));
      EXPECT_TRUE(head_dim_refused(72, DType::fp8_e4m3));
    }
  }
}

std::vector<bool> sdpa_switches() {
  const auto& ctx = at::globalContext();
  return {ctx.userEnabledMathSDP(),  ctx.userEnabledMemEfficientSDP(), ctx.userEnabledFlashSDP(),
          ctx.userEnabledCuDNNSDP(), ctx.userEnabledOverrideableSDP(), ctx.userEnabledFA3SDP()};
}

TEST(ForcedSdpa, ForcingDoesNotLeakIntoOtherPlugins) {
  c10::InferenceMode guard;
  const std::vector<bool> before = sdpa_switches();
  const InputTensors in = make_inputs(problem(1, 2, 32, 16, DType::f32, true, Device::cpu), 5);
  backend("math").forward(in.view());
  EXPECT_EQ(sdpa_switches(), before);
  // A refusal (flash forced on inputs it cannot take) restores them too.
  EXPECT_THROW(sdpa::forced_attention(sdpa::Kernel::cudnn, in.view()), Unsupported);
  EXPECT_EQ(sdpa_switches(), before);
}

TEST(ForcedSdpa, RefusalReasonKeepsOnlyTheForcedKernelsSection) {
  const std::vector<std::string> warnings = {
      "Memory efficient kernel not used because:",
      "Memory Efficient attention has been runtime disabled.",
      "Flash attention kernel not used because:",
      "Flash attention requires q,k,v to have the same last dimension and to be less than or equal "
      "to 256. Got "
      "Query.size(-1): 512 (Triggered internally at "
      "/pytorch/aten/src/ATen/native/transformers/sdp_utils_cpp.h:123.)",
      "CuDNN attention kernel not used because:",
      "CuDNN attention has been runtime disabled.",
  };
  EXPECT_EQ(sdpa::refusal_reason(sdpa::Kernel::flash, warnings),
            "Flash attention requires q,k,v to have the same last dimension and to be less than or "
            "equal to 256. Got "
            "Query.size(-1): 512");
  EXPECT_EQ(sdpa::refusal_reason(sdpa::Kernel::efficient, warnings), "");
}

}  // namespace
}  // namespace attnbench
