// GPU checks of the workloads beyond square forward attention: grouped-query heads, a query block
// against a longer cache, decode, and the backward pass, for the six plugins. Skipped, with a
// message, where there is no CUDA device.
#include "kinds/problem.hpp"
#include "gpu_support.hpp"
#include "measure/device/cupti_tracer.hpp"
#include "measure/runner.hpp"
#include "test_support.hpp"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <iostream>
#include <regex>

namespace attnbench {
namespace {

using test::backward;
using test::host;
using test::problem;
using test::with_kv;

Problem cuda_bf16(int64_t heads, int64_t kv_heads, int64_t seq, int64_t seq_kv, bool causal) {
  return with_kv(problem(2, heads, seq, 64, DType::bf16, causal, Device::cuda), kv_heads, seq_kv);
}

// Where a backend cannot run a shape, the part of its reason that says why; "" where it runs.
struct ShapeCase {
  const char* what;
  Problem problem;
  const char* backend;
  const char* refusal;
};

std::vector<ShapeCase> shape_cases() {
  const Problem gqa = cuda_bf16(8, 2, 512, 512, true);
  const Problem prefill = cuda_bf16(8, 8, 128, 640, true);  // bottom-right causal
  const Problem gqa_prefill = cuda_bf16(8, 2, 128, 640, true);
  const Problem decode = cuda_bf16(32, 8, 1, 4096, false);
  std::vector<ShapeCase> cases;
  for (const char* b : {"naive", "inplace", "math", "flash", "cudnn"})
    cases.push_back({"gqa", gqa, b, ""});
  cases.push_back({"gqa", gqa, "efficient", "memory efficient refused"});
  for (const char* b : {"naive", "inplace", "math", "flash", "efficient"})
    cases.push_back({"prefill", prefill, b, ""});
  cases.push_back({"prefill", prefill, "cudnn", "top-left causal mask"});
  for (const char* b : {"naive", "math", "flash"})
    cases.push_back({"gqa prefill", gqa_prefill, b, ""});
  cases.push_back({"gqa prefill", gqa_prefill, "efficient", "no grouped-query support"});
  for (const char* b : {"naive", "inplace", "math", "flash", "cudnn"})
    cases.push_back({"decode", decode, b, ""});
  // Causal, one query sees every key (bottom-right): cudnn runs it unmasked.
  const Problem causal_decode = cuda_bf16(32, 8, 1, 4096, true);
  for (const char* b : {"naive", "inplace", "math", "flash", "cudnn"})
    cases.push_back({"causal decode", causal_decode, b, ""});
  return cases;
}

TEST(GpuWorkloads, GqaPrefillAndDecodeAreCorrectOrRefusedWithTheReason) {
  REQUIRE_CUDA();
  c10::InferenceMode guard;
  for (const ShapeCase& c : shape_cases()) {
    const InputTensors in = make_inputs(c.problem, 21);
    std::string refused;
    at::Tensor out;
    try {
      out = test::backend(c.backend).forward(in.view());
    } catch (const Unsupported& e) {
      refused = e.what();
    }
    std::cout << "[ measured ] " << c.what << " " << c.backend << ": "
              << (refused.empty() ? "rel_err " + std::to_string(forward_error(in, out).rel_err)
                                  : "refused: " + refused)
              << "\n";
    if (*c.refusal) {
      EXPECT_NE(refused.find(c.refusal), std::string::npos)
          << c.what << " " << c.backend << ": '" << refused << "'";
    } else {
      ASSERT_TRUE(refused.empty()) << c.what << " " << c.backend << ": " << refused;
      EXPECT_LT(forward_error(in, out).rel_err, default_tolerances().at(DType::bf16))
          << c.what << " " << c.backend;
    }
  }
}

MeasureSettings passes(std::vector<Pass> wanted) {
  MeasureSettings m = test::quick_settings();
  m.passes = std::move(wanted);
  m.kernel_pass_iterations = 3;
  m.timing_modes = {TimingMode::cold};
  return m;
}

// Backward through the runner, as a sweep runs it: gradients against float64 autograd, and what
// each backend's backward launches (the numbers go to the log for results/h200/gpu-tests.txt).
TEST(GpuWorkloads, EveryBackendsBackwardIsCorrectAndLaunchesItsOwnKernels) {
  REQUIRE_CUDA();
  if (!cupti_available()) GTEST_SKIP() << "skipped: built without CUPTI";
  RunOptions options;
  options.measurement = passes({Pass::correctness, Pass::ops, Pass::kernels});
  options.tolerance = default_tolerances();
  test::MeasuringRunner runner(host(), options);
  struct Case {
    const char* backend;
    const char* kernel_pattern;                  // a kernel name the backward must launch
    double kernels, memcpy, memset;              // per call, causal MHA point
    double gqa_kernels, gqa_memcpy, gqa_memset;  // per call, GQA point
  };
  // What the H200 showed (d4c1ea06dd7f). The unfused backward is autograd's: four GEMMs, softmax's
  // backward, the mask's and the scale's; masked_fill's backward copies out of place even for
  // inplace; with GQA the expanded k and v are summed back per group (+2 kernels). flash and cudnn
  // launch two more kernels with GQA too.
  const Case cases[] = {{"naive", "softmax", 8, 1, 0, 9, 0, 0},
                        {"inplace", "softmax", 8, 1, 0, 9, 0, 0},
                        {"math", "softmax", 12, 0, 0, 14, 0, 0},
                        {"efficient", "fmha|Attention", 3, 0, 0, 0, 0, 0},
                        {"flash", "flash_bwd", 5, 0, 0, 7, 0, 0},
                        {"cudnn", "cudnn|sm90|fmha|sdpa", 3, 0, 1, 5, 0, 1}};
  for (const Problem& p :
       {backward(cuda_bf16(4, 4, 1024, 1024, true)), backward(cuda_bf16(8, 2, 512, 512, false))}) {
    const bool gqa = p.kv_heads != p.heads;
    for (const Case& c : cases) {
      const BackendRecords r = runner.measure({p, point_id(p)}, *test::plugins().find(c.backend));
      ASSERT_FALSE(r.rows.empty()) << c.backend;
      const Row& row = r.rows[0];
      std::cout << "[ measured ] " << point_id(p) << " " << c.backend << ": "
                << to_string(row.status) << " " << row.reason;
      if (row.status == Status::ok)
        std::cout << " rel_err " << *row.rel_err << ", kernels " << *row.kernels_per_call
                  << ", memcpy " << *row.memcpy_per_call << ", memset " << *row.memset_per_call
                  << ", aten ops " << *row.aten_ops_per_call << " (" << row.aten_ops << ")";
      std::cout << "\n";
      if (gqa && std::string(c.backend) == "efficient") {
        EXPECT_EQ(row.status, Status::unsupported) << row.reason;
        EXPECT_NE(row.reason.find("memory efficient refused"), std::string::npos) << row.reason;
        continue;
      }
      ASSERT_EQ(row.status, Status::ok) << c.backend << ": " << row.reason;
      EXPECT_LT(*row.rel_err, default_tolerances().at(DType::bf16)) << c.backend;
      EXPECT_EQ(*row.kernels_per_call, gqa ? c.gqa_kernels : c.kernels) << c.backend;
      EXPECT_EQ(*row.memcpy_per_call, gqa ? c.gqa_memcpy : c.memcpy) << c.backend;
      EXPECT_EQ(*row.memset_per_call, gqa ? c.gqa_memset : c.memset) << c.backend;
      EXPECT_EQ(row.flags.find("kernel_set_varies"), std::string::npos) << c.backend;
      int matching = 0;
      for (const KernelRow& k : r.kernels)
        matching += k.kind == ActivityKind::kernel &&
                    std::regex_search(k.name, std::regex(c.kernel_pattern));
      EXPECT_GE(matching, 1) << c.backend << " launched no kernel matching " << c.kernel_pattern;
    }
  }
}

// Graph capture of a backward pass either works or is an error row with the reason (on the H200:
// autograd runs the backward on the forward's stream, the legacy one, which a capture on another
// stream may not depend on); the modes after it, and the points after it, still measure.
TEST(GpuWorkloads, BackwardGraphCaptureIsAStatusNotACrash) {
  REQUIRE_CUDA();
  RunOptions options;
  options.measurement = passes({Pass::timing});
  options.measurement.timing_modes = {TimingMode::graph, TimingMode::batch, TimingMode::cold};
  test::MeasuringRunner runner(host(), options);
  // A forward point first, as in a sweep: the runner's timer is made there, in inference mode, and
  // must still flush the L2 at backward points.
  const Problem fwd = cuda_bf16(4, 4, 1024, 1024, true);
  for (const Row& row : runner.measure({fwd, point_id(fwd)}, *test::plugins().find("flash")).rows)
    EXPECT_EQ(row.status, Status::ok) << to_string(row.timing_mode) << ": " << row.reason;
  const Problem p = backward(fwd);
  for (const char* name : {"flash", "naive"}) {
    const BackendRecords r = runner.measure({p, point_id(p)}, *test::plugins().find(name));
    ASSERT_EQ(r.rows.size(), 3u) << name;
    std::cout << "[ measured ] bwd graph capture, " << name << ": " << to_string(r.rows[0].status)
              << " " << r.rows[0].reason << "\n";
    EXPECT_TRUE(r.rows[0].status == Status::ok ||
                (r.rows[0].status == Status::error && !r.rows[0].reason.empty()));
    EXPECT_EQ(r.rows[1].status, Status::ok) << name << ": " << r.rows[1].reason;
    EXPECT_EQ(r.rows[2].status, Status::ok) << name << ": " << r.rows[2].reason;
  }
}

}  // namespace
}  // namespace attnbench
