// GPU checks of the Hopper plugins (fa3, cudnn-fe, flashinfer): every kind of point each takes is
// correct against float64, and launches exactly its kernels, memcpys and memsets per call.
// Skipped, with a message, without a CUDA device; a plugin this build or machine lacks (no
// headers at configure time, no FA3 library) is skipped with its own reason.
#include "kinds/problem.hpp"
#include "gpu_support.hpp"
#include "measure/device/cupti_tracer.hpp"
#include "measure/runner.hpp"
#include "test_support.hpp"

#include <iostream>

namespace attnbench {
namespace {

using test::backward;
using test::host;
using test::problem;
using test::with_kv;

Problem cuda(DType dtype, int64_t heads, int64_t kv_heads, int64_t seq, int64_t seq_kv,
             int64_t head_dim, bool causal) {
  return with_kv(problem(2, heads, seq, head_dim, dtype, causal, Device::cuda), kv_heads, seq_kv);
}

struct Case {
  const char* backend;
  const char* what;
  Problem problem;
  double kernels, memsets;  // per call; memcpys are 0 for all of them
};

// What the H200 showed, each count explained in results/README.md ("The Hopper contenders").
std::vector<Case> cases() {
  const auto bf16 = DType::bf16, fp8 = DType::fp8_e4m3;
  return {
      // FA3: one kernel; causal, GQA and decode points first zero the persistent tile
      // scheduler's counter (a small int fill, PyTorch's FillFunctor).
      {"fa3", "full d64", cuda(bf16, 8, 8, 512, 512, 64, false), 1, 0},
      {"fa3", "causal d128", cuda(bf16, 8, 8, 512, 512, 128, true), 2, 0},
      {"fa3", "full d256", cuda(bf16, 8, 8, 256, 256, 256, false), 1, 0},
      {"fa3", "gqa causal", cuda(bf16, 8, 2, 512, 512, 128, true), 2, 0},
      {"fa3", "query block vs cache, causal", cuda(bf16, 16, 4, 128, 1024, 128, true), 2, 0},
      {"fa3", "decode", cuda(bf16, 16, 4, 1, 4096, 128, false), 2, 0},
      {"fa3", "fp8 full d128", cuda(fp8, 8, 8, 512, 512, 128, false), 1, 0},
      {"fa3", "fp8 causal gqa", cuda(fp8, 8, 2, 512, 512, 128, true), 2, 0},
      // cuDNN through the frontend: one kernel and cuDNN's own memset forward; decode splits
      // over the cache without one; backward three kernels and a memset.
      {"cudnn-fe", "full d64", cuda(bf16, 8, 8, 512, 512, 64, false), 1, 1},
      {"cudnn-fe", "causal d128", cuda(bf16, 8, 8, 512, 512, 128, true), 1, 1},
      {"cudnn-fe", "gqa causal", cuda(bf16, 8, 2, 512, 512, 128, true), 1, 1},
      {"cudnn-fe", "query block vs cache, causal", cuda(bf16, 16, 4, 128, 1024, 128, true), 1, 1},
      {"cudnn-fe", "backward causal", backward(cuda(bf16, 8, 8, 256, 256, 64, true)), 3, 1},
      // fp8: cuDNN zeroes its two amax outputs and a workspace first (3 memsets).
      {"cudnn-fe", "fp8 full d128", cuda(fp8, 8, 8, 512, 512, 128, false), 1, 3},
      {"cudnn-fe", "fp8 causal gqa", cuda(fp8, 8, 2, 512, 512, 128, true), 1, 3},
      // FlashInfer: its Hopper prefill kernel, one launch (the schedule was copied at plan
      // time); decode one kernel, and a merge kernel where the cache is split.
      {"flashinfer", "full d64", cuda(bf16, 8, 8, 512, 512, 64, false), 1, 0},
      {"flashinfer", "causal d128", cuda(bf16, 8, 8, 512, 512, 128, true), 1, 0},
      {"flashinfer", "gqa causal", cuda(bf16, 8, 2, 512, 512, 128, true), 1, 0},
      {"flashinfer", "query block vs cache, causal", cuda(bf16, 16, 4, 128, 1024, 128, true), 1, 0},
      {"flashinfer", "decode", cuda(bf16, 16, 4, 1, 4096, 128, false), 2, 0},
      {"flashinfer", "decode d64, odd cache", cuda(bf16, 8, 8, 1, 1000, 64, false), 2, 0},
  };
}

TEST(GpuHopper, EveryKindOfPointIsCorrectAndLaunchesExactlyItsKernels) {
  REQUIRE_CUDA();
  if (!cupti_available()) GTEST_SKIP() << "skipped: built without CUPTI";
  RunOptions options;
  options.measurement = test::quick_settings();
  options.measurement.passes = {Pass::correctness, Pass::kernels};
  options.measurement.kernel_pass_iterations = 3;
  options.tolerance = default_tolerances();
  test::MeasuringRunner runner(host(), options);
  int measured = 0;
  for (const Case& c : cases()) {
    const LoadedBackend* loaded = test::plugins().find(c.backend);
    if (!loaded) {
      std::cout << "[ skipped  ] " << c.backend << ": not built here\n";
      continue;
    }
    const BackendRecords r = runner.measure({c.problem, point_id(c.problem)}, *loaded);
    ASSERT_FALSE(r.rows.empty());
    const Row& row = r.rows[0];
    std::cout << "[ measured ] " << c.backend << " " << c.what << " (" << point_id(c.problem)
              << "): " << to_string(row.status) << " " << row.reason;
    if (row.status == Status::ok)
      std::cout << " rel_err " << *row.rel_err << ", kernels " << *row.kernels_per_call
                << ", memcpy " << *row.memcpy_per_call << ", memset " << *row.memset_per_call;
    std::cout << "\n";
    if (row.status == Status::unsupported && row.reason.find("not found") != std::string::npos)
      continue;  // fa3 without its library: the CPU tests check that reason
    ++measured;
    ASSERT_EQ(row.status, Status::ok) << c.backend << " " << c.what << ": " << row.reason;
    EXPECT_LT(*row.rel_err, default_tolerances().at(c.problem.dtype)) << c.backend << " " << c.what;
    EXPECT_EQ(*row.kernels_per_call, c.kernels) << c.backend << " " << c.what;
    EXPECT_EQ(*row.memcpy_per_call, 0) << c.backend << " " << c.what;
    EXPECT_EQ(*row.memset_per_call, c.memsets) << c.backend << " " << c.what;
    EXPECT_EQ(row.flags.find("kernel_set_varies"), std::string::npos) << c.backend << " " << c.what;
    if (c.problem.dtype == DType::fp8_e4m3) {
      ASSERT_TRUE(row.fp8_scale_q && row.fp8_scale_k && row.fp8_scale_v);
      EXPECT_GT(*row.fp8_scale_v, 0);
    }
  }
  std::cout << "[ measured ] " << measured << " cases\n";
}

// The float64 reference is taken from the quantized inputs, so an fp8 row's error is the kernel's
// own; a planted error in one output row is still caught at fp8's tolerance.
TEST(GpuHopper, Fp8ReferenceCatchesAWrongRow) {
  REQUIRE_CUDA();
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(cuda(DType::fp8_e4m3, 4, 4, 256, 256, 64, true), 31);
  EXPECT_EQ(in.q.scalar_type(), at::kFloat8_e4m3fn);
  // The exact attention of the dequantized inputs, rounded to bf16, passes...
  const at::Tensor q = dequantized(in.q, in.q_scale), k = dequantized(in.k, in.k_scale),
                   v = dequantized(in.v, in.v_scale);
  const at::Tensor scores =
      (at::matmul(q, k.transpose(-1, -2)) * in.scale)
          .masked_fill(in.mask, -std::numeric_limits<double>::infinity());
  at::Tensor out = at::matmul(at::softmax(scores, -1), v).to(at::kBFloat16);
  EXPECT_LT(forward_error(in, out).rel_err, 5e-3);
  // ... the attention of the unscaled fp8 numbers does not, nor a wrong row.
  EXPECT_GT(forward_error(in, (out / in.v_scale).to(at::kBFloat16)).rel_err, 0.5);
  out[1][2][255] += 0.5;
  EXPECT_GT(forward_error(in, out).rel_err, default_tolerances().at(DType::fp8_e4m3));
}

}  // namespace
}  // namespace attnbench
