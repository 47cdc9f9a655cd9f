// GPU checks: skipped, with a message, where there is no CUDA device.
#include "gpu_support.hpp"
#include "measure/device/cupti_tracer.hpp"
#include "measure/device/device_monitor.hpp"
#include "measure/device/read_kernel.hpp"
#include "measure/device/sm_clock_span.hpp"
#include "measure/runner.hpp"
#include "test_support.hpp"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#ifdef ATTNBENCH_WITH_KERNELS
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <regex>

namespace attnbench {
namespace {

using test::backend;
using test::host;
using test::problem;

const char* const kAll[] = {"naive", "inplace", "math", "efficient", "flash", "cudnn"};

TEST(Gpu, EveryBackendIsCorrectInBf16AndFp16) {
  REQUIRE_CUDA();
  c10::InferenceMode guard;
  for (DType dtype : {DType::bf16, DType::f16}) {
    for (const char* name : kAll) {
      for (uint64_t seed : {11u, 12u}) {
        const InputTensors in =
            make_inputs(problem(2, 4, 512, 64, dtype, true, Device::cuda), seed);
        const at::Tensor out = backend(name).forward(in.view());
        EXPECT_LT(forward_error(in, out).rel_err, default_tolerances().at(dtype)) << name;
      }
    }
  }
}

TEST(Gpu, UnfusedBackendsAreCorrectInFp32) {
  REQUIRE_CUDA();
  c10::InferenceMode guard;
  for (const char* name : {"naive", "inplace", "math"}) {
    const InputTensors in = make_inputs(problem(1, 2, 256, 64, DType::f32, true, Device::cuda), 13);
    EXPECT_LT(forward_error(in, backend(name).forward(in.view())).rel_err, 1e-4) << name;
  }
}

TEST(Gpu, ForcedKernelsRefuseWhatTheyCannotRunWithPyTorchsReason) {
  REQUIRE_CUDA();
  c10::InferenceMode guard;
  auto refusal = [](const char* name, const Problem& p) -> std::string {
    const InputTensors in = make_inputs(p, 14);
    try {
      backend(name).forward(in.view());
    } catch (const Unsupported& e) {
      return e.what();
    }
    return "";
  };
  const std::string flash_512 =
      refusal("flash", problem(1, 2, 128, 512, DType::bf16, true, Device::cuda));
  EXPECT_NE(flash_512.find("flash attention refused"), std::string::npos) << flash_512;
  EXPECT_NE(flash_512.find("256"), std::string::npos) << flash_512;
  const std::string flash_fp32 =
      refusal("flash", problem(1, 2, 128, 64, DType::f32, true, Device::cuda));
  EXPECT_NE(flash_fp32.find("flash attention refused"), std::string::npos) << flash_fp32;
  const std::string cudnn_fp32 =
      refusal("cudnn", problem(1, 2, 128, 64, DType::f32, true, Device::cuda));
  EXPECT_NE(cudnn_fp32.find("cudnn attention refused"), std::string::npos) << cudnn_fp32;
}

GpuTrace trace(const char* name, const Problem& p, int iterations = 3) {
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(p, 15);
  backend(name).forward(in.view());  // warm-up outside the trace
  return trace_gpu_activity([&] { backend(name).forward(in.view()); }, iterations);
}

int count(const GpuTrace& t, ActivityKind kind, const std::string& pattern = ".*") {
  int n = 0;
  for (const auto& a : t.activities)
    n += a.kind == kind && std::regex_search(a.name, std::regex(pattern));
  return n;
}

std::string names(const GpuTrace& t) {
  std::string out;
  for (const auto& a : t.activities) out += "\n  " + to_string(a.kind) + " " + a.name;
  return out;
}

TEST(Gpu, EfficientAndFlashLaunchExactlyOneAttentionKernel) {
  REQUIRE_CUDA();
  if (!cupti_available()) GTEST_SKIP() << "skipped: built without CUPTI";
  const Problem p = problem(2, 8, 1024, 64, DType::bf16, true, Device::cuda);
  const GpuTrace efficient = trace("efficient", p);
  EXPECT_EQ(count(efficient, ActivityKind::kernel, "fmha|attention|Attention"), 3)
      << names(efficient);
  const GpuTrace flash = trace("flash", p);
  EXPECT_EQ(count(flash, ActivityKind::kernel, "flash"), 3) << names(flash);
  EXPECT_TRUE(flash.same_every_iteration) << flash.difference;
}

TEST(Gpu, InplaceHasOneMemcpyFewerThanNaive) {
  REQUIRE_CUDA();
  if (!cupti_available()) GTEST_SKIP() << "skipped: built without CUPTI";
  const Problem p = problem(2, 8, 1024, 64, DType::bf16, true, Device::cuda);
  const GpuTrace naive = trace("naive", p, 2), inplace = trace("inplace", p, 2);
  EXPECT_EQ(count(naive, ActivityKind::memcpy) - count(inplace, ActivityKind::memcpy), 2)
      << "naive:" << names(naive) << "\ninplace:" << names(inplace);
  EXPECT_EQ(count(naive, ActivityKind::kernel), count(inplace, ActivityKind::kernel));
}

TEST(Gpu, CuptiIsAttachedOnlyDuringTheKernelPass) {
  REQUIRE_CUDA();
  if (!cupti_available()) GTEST_SKIP() << "skipped: built without CUPTI";
  c10::InferenceMode guard;
  const InputTensors in = make_inputs(problem(1, 2, 256, 64, DType::bf16, true, Device::cuda), 16);
  bool attached_inside = false;
  trace_gpu_activity(
      [&] {
        attached_inside = cupti_attached();
        backend("flash").forward(in.view());
      },
      1);
  EXPECT_TRUE(attached_inside);
  EXPECT_FALSE(cupti_attached());
}

// Another process has a CUDA context on this GPU (ctest -j4): the device's free memory is then
// not measured (device_mem_left_mib and device_mem_grown_mib stay empty).
bool gpu_shared() { return DeviceMonitor(0).shared_with_another_process(); }

MeasureSettings quick() {
  MeasureSettings m = test::quick_settings();
  m.min_samples = 5;
  m.max_samples = 200;
  m.max_time_s = 0.1;
  m.cpu_pass_calls = 20;
  m.timing_modes = {TimingMode::cold, TimingMode::batch, TimingMode::graph};
  return m;
}

TEST(Gpu, EveryTimingModeGivesPositiveFiniteTimesAndEveryPassItsColumns) {
  REQUIRE_CUDA();
  RunOptions options;
  options.measurement = quick();
  options.info.device_name = host().device_name;
  test::MeasuringRunner runner(host(), options);
  const Problem p = problem(2, 8, 1024, 64, DType::bf16, true, Device::cuda);
  for (const char* name : kAll) {
    const bool shared_before = gpu_shared();
    const BackendRecords r = runner.measure({p, "gpu-test"}, *test::plugins().find(name));
    const bool shared = shared_before || gpu_shared();
    ASSERT_EQ(r.rows.size(), 3u) << name;
    for (const Row& row : r.rows) {
      EXPECT_EQ(row.status, Status::ok)
          << name << " " << to_string(row.timing_mode) << ": " << row.reason;
      ASSERT_TRUE(row.time_ms_median) << name << " " << to_string(row.timing_mode);
      EXPECT_TRUE(std::isfinite(*row.time_ms_median) && *row.time_ms_median > 0)
          << name << " " << to_string(row.timing_mode);
      EXPECT_GT(*row.time_ms_p10, 0);
      EXPECT_TRUE(row.cpu_us_median && *row.cpu_us_median > 0) << name;
      EXPECT_TRUE(row.peak_mem_mib) << name;
      EXPECT_TRUE(row.kernels_per_call && *row.kernels_per_call >= 1) << name;
      ASSERT_TRUE(row.kernel_us_per_call && row.gpu_us_per_call) << name;  // memsets add to gpu_us
      EXPECT_GT(*row.kernel_us_per_call, 0) << name;
      EXPECT_LE(*row.kernel_us_per_call, *row.gpu_us_per_call) << name;
      EXPECT_TRUE(row.aten_ops_per_call) << name;
      // NVML is there wherever the driver is: the clock around the pass, power, temperature.
      EXPECT_TRUE(row.sm_clock_mhz_start && *row.sm_clock_mhz_start > 0) << name;
      EXPECT_TRUE(row.sm_clock_mhz_end && *row.sm_clock_mhz_end > 0) << name;
      EXPECT_TRUE(row.power_w && *row.power_w > 0) << name;
      EXPECT_TRUE(row.temperature_c && *row.temperature_c > 0) << name;
      // Honest backends take no memory call after call, nor what another process on the GPU
      // takes meanwhile (ctest -j4 flagged naive here before the device's free memory was read
      // only while this process had the GPU alone).
      if (row.device_mem_grown_mib)
        EXPECT_LT(*row.device_mem_grown_mib, kGrowthMib) << name;
      else
        EXPECT_TRUE(shared) << name << ": unmeasured with the GPU to itself";
      EXPECT_FALSE(row.has_flag(Flag::leaked_device_memory)) << name << ": " << row.flags;
    }
    EXPECT_FALSE(r.kernels.empty()) << name;
  }
}

// What each backend launches per call at one seed point (b4-h16-s1024-d64-bf16-causal), as the
// study predicts and the H200 showed: the runner's columns, and its kernel rows adding up to them.
struct Activities {
  const char* backend;
  double kernels, memcpy, memset;
  int64_t aten_ops, aten_copies;
};
const Activities kSeedPoint[] = {
    {"naive", 5, 1, 1, 5, 1},      // five ops, plus masked_fill's copy; cuBLASLt's 4-byte memset
    {"inplace", 5, 0, 1, 5, 0},    // masked_fill_: the copy is gone
    {"math", 20, 0, 0, 1, 5},      // the fp32 reference: upcasts, two fp32 GEMMs, softmax, ...
    {"efficient", 1, 0, 0, 1, 0},  // one fused kernel each
    {"flash", 1, 0, 0, 1, 0},     {"cudnn", 1, 0, 1, 1, 0},
};

TEST(Gpu, EveryBackendLaunchesExactlyItsKernelsCopiesAndMemsetsAtASeedPoint) {
  REQUIRE_CUDA();
  if (!cupti_available()) GTEST_SKIP() << "skipped: built without CUPTI";
  RunOptions options;
  options.measurement = quick();
  options.measurement.passes = {Pass::correctness, Pass::ops, Pass::kernels};
  options.measurement.kernel_pass_iterations = 3;
  test::MeasuringRunner runner(host(), options);
  const Problem p = problem(4, 16, 1024, 64, DType::bf16, true, Device::cuda);
  for (const Activities& want : kSeedPoint) {
    const BackendRecords r = runner.measure({p, "b4-h16-s1024-d64-bf16-causal-cuda"},
                                            *test::plugins().find(want.backend));
    ASSERT_EQ(r.rows.size(), 3u) << want.backend;
    const Row& row = r.rows[0];
    ASSERT_EQ(row.status, Status::ok) << want.backend << ": " << row.reason;
    ASSERT_TRUE(row.kernels_per_call && row.memcpy_per_call && row.memset_per_call) << want.backend;
    std::cout << "[ measured ] " << want.backend << ": kernels " << *row.kernels_per_call
              << ", memcpy " << *row.memcpy_per_call << ", memset " << *row.memset_per_call
              << ", aten ops " << *row.aten_ops_per_call << " (" << row.aten_ops << "), copies "
              << *row.aten_copies_per_call << ", flags '" << row.flags << "'\n";
    EXPECT_EQ(*row.kernels_per_call, want.kernels) << want.backend;
    EXPECT_EQ(*row.memcpy_per_call, want.memcpy) << want.backend;
    EXPECT_EQ(*row.memset_per_call, want.memset) << want.backend;
    EXPECT_EQ(*row.aten_ops_per_call, want.aten_ops) << want.backend;
    EXPECT_EQ(*row.aten_copies_per_call, want.aten_copies) << want.backend;
    EXPECT_EQ(row.flags.find("kernel_set_varies"), std::string::npos)
        << want.backend << ": " << r.notes;
    for (const Row& other : r.rows)
      EXPECT_EQ(other.kernels_per_call, row.kernels_per_call) << to_string(other.timing_mode);
    std::map<std::string, double> launches;
    for (const KernelRow& k : r.kernels) {
      launches[to_string(k.kind)] += k.launches_per_call;
      EXPECT_EQ(k.point_id, "b4-h16-s1024-d64-bf16-causal-cuda");
      EXPECT_EQ(k.backend, want.backend);
      if (k.kind == ActivityKind::kernel)
        EXPECT_TRUE(k.theoretical_occupancy_pct) << want.backend << " " << k.name;
      else
        EXPECT_TRUE(k.bytes && *k.bytes > 0) << want.backend << " " << k.name;
    }
    EXPECT_EQ(launches["kernel"], want.kernels) << want.backend;
    EXPECT_EQ(launches["memcpy"], want.memcpy) << want.backend;
    EXPECT_EQ(launches["memset"], want.memset) << want.backend;
  }
}

TEST(Gpu, TraceLinksEveryGpuActivityToItsLaunchInsideAnOp) {
  REQUIRE_CUDA();
  if (!cupti_available()) GTEST_SKIP() << "skipped: built without CUPTI";
  RunOptions options;
  options.measurement = quick();
  options.measurement.passes = {Pass::kernels};
  options.measurement.trace = true;
  options.measurement.kernel_pass_iterations = 3;
  test::MeasuringRunner runner(host(), options);
  const Problem p = problem(4, 16, 1024, 64, DType::bf16, true, Device::cuda);
  for (const char* name : kAll) {
    const BackendRecords r =
        runner.measure({p, "b4-h16-s1024-d64-bf16-causal-cuda"}, *test::plugins().find(name));
    const Row& row = r.rows.at(0);
    ASSERT_EQ(row.status, Status::ok) << name << ": " << row.reason;
    ASSERT_TRUE(r.trace) << name;
    std::map<uint32_t, const TraceEvent*> launches;
    std::vector<const TraceEvent*> gpu, ops;
    for (const TraceEvent& e : r.trace->events) {
      if (e.category == "cuda_api") launches[e.flow] = &e;
      if (e.lane == TraceLane::gpu) gpu.push_back(&e);
      if (e.category == "cpu_op" && e.track == 0 && e.args.at(0).second == "0") ops.push_back(&e);
    }
    const double per_call = *row.kernels_per_call + *row.memcpy_per_call + *row.memset_per_call;
    EXPECT_EQ(static_cast<double>(gpu.size()), 3 * per_call) << name;
    double worst_lead_us = 0;
    for (const TraceEvent* g : gpu) {
      ASSERT_NE(g->flow, 0u) << name << ": " << g->name << " has no launch";
      const TraceEvent* launch = launches.at(g->flow);
      EXPECT_EQ(launch->track, 0u) << name << ": " << launch->name << " not on the calling thread";
      worst_lead_us = std::max(worst_lead_us, launch->start_us - g->start_us);
      const bool inside_an_op = std::any_of(ops.begin(), ops.end(), [&](const TraceEvent* op) {
        return launch->start_us >= op->start_us &&
               launch->start_us <= op->start_us + op->duration_us;
      });
      EXPECT_TRUE(inside_an_op) << name << ": " << launch->name << " at " << launch->start_us;
    }
    // Two clocks on one time line: a launch may not appear after what it launched began.
    EXPECT_LT(worst_lead_us, 2.0) << name;
    std::cout << "[ traced   ] " << name << ": " << r.trace->events.size() << " events, "
              << gpu.size() << " on the GPU; a launch began at most " << worst_lead_us
              << " us after its activity\n";
  }
}

class SynchronizingBackend : public Backend {
 public:
  std::string name() const override { return "syncs"; }
  std::string description() const override {
    return "reads a value back to the host inside forward";
  }
  Support supports(const Problem&) const override { return Support::yes(); }
  at::Tensor forward(const Inputs& in) override {
    at::Tensor out = at::scaled_dot_product_attention(in.q, in.k, in.v);
    if (out.sum().item<float>() == 12345.f)
      out.add_(1);  // a host read: forbidden during graph capture
    return out;
  }
};

TEST(Gpu, MemoryTakenCallAfterCallIsALeakAtAnySize) {
  REQUIRE_CUDA();
  RunOptions options;
  options.measurement = quick();
  options.measurement.timing_modes = {TimingMode::cold};
  test::MeasuringRunner runner(host(), options);
  const bool shared_before = gpu_shared();
  // configs/probes.yaml's `leaks`: 4 MiB of cudaMalloc a call, kept (outside PyTorch's allocator).
  static const PluginSet faulty = load_plugins(ATTNBENCH_FAULTY_PLUGIN_DIR);
  const LoadedBackend* leaks = faulty.find("leaks");
  ASSERT_TRUE(leaks) << "tests/faulty_plugins/leaks.cpp not built";
  const BackendRecords r = runner.measure(
      {problem(1, 2, 128, 64, DType::bf16, false, Device::cuda), "leak-test"}, *leaks);
  ASSERT_EQ(r.rows.size(), 1u);
  const Row& row = r.rows[0];
  if (!row.device_mem_grown_mib && (shared_before || gpu_shared()))
    GTEST_SKIP() << "skipped: another process shares the GPU (ctest -j), so its free memory is "
                    "not this process's to judge; the step gpu-tests runs this alone";
  ASSERT_TRUE(row.device_mem_grown_mib) << row.reason;
  std::cout << "measured: grew " << *row.device_mem_grown_mib << " MiB over the CPU pass\n";
  EXPECT_GE(*row.device_mem_grown_mib, kGrowthMib);  // 5 to 20 calls of 4 MiB
  EXPECT_TRUE(row.has_flag(Flag::leaked_device_memory)) << row.flags;
}

TEST(Gpu, ASamplesClockIsTheMeanSmClockDuringIt) {
  REQUIRE_CUDA();
#ifndef ATTNBENCH_WITH_KERNELS
  GTEST_SKIP() << "skipped: built without nvcc, so without the SM clock span";
#else
  c10::InferenceMode guard;
  const DeviceMonitor monitor(0);
  const std::optional<double> max_mhz = monitor.max_sm_clock_mhz();
  ASSERT_TRUE(max_mhz);
  SmClockSpan span(0);
  const at::Tensor a = at::randn({4096, 4096}, at::device(at::kCUDA).dtype(at::kBFloat16));
  span.open();
  for (int i = 0; i < 40; ++i) at::mm(a, a);  // a few milliseconds of work
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::optional<double> busy = mean_clock_mhz(span.close());
  ASSERT_TRUE(busy) << "no SM was read at both ends";
  std::cout << "measured: mean SM clock " << *busy << " MHz (NVML's maximum " << *max_mhz << ")\n";
  // Counted cycles over nanoseconds: never above the maximum (the global timer's microsecond
  // steps over a stretch of milliseconds leave under 1%), and no Hopper runs below 500 MHz busy.
  EXPECT_LE(*busy, *max_mhz * 1.01);
  EXPECT_GT(*busy, 500);
  // An empty stretch reads nothing unless the GPU, shared with other processes (ctest -j), took
  // longer than the shortest span between the two reads; which one it was is in the stamps.
  span.open();
  const SmStamps empty = span.close();
  unsigned long long longest_ns = 0;
  for (size_t sm = 0; sm < empty.open.size() && sm < empty.close.size(); ++sm)
    if (empty.open[sm].timer_ns && empty.close[sm].timer_ns)
      longest_ns = std::max(longest_ns, empty.close[sm].timer_ns - empty.open[sm].timer_ns);
  if (longest_ns < kShortestSpanUs * 1000)
    EXPECT_FALSE(mean_clock_mhz(empty)) << "a stretch shorter than the shortest span reads nothing";
#endif
}

// The read ceiling's kernel reads every 16 bytes it is given: a word that folds to the one value
// its sink is written for, put anywhere (the unrolled loop, its tail), is seen.
TEST(Gpu, TheReadKernelReadsEveryByte) {
  REQUIRE_CUDA();
#ifndef ATTNBENCH_WITH_KERNELS
  GTEST_SKIP() << "skipped: built without nvcc, so without the harness's kernels";
#else
  c10::InferenceMode guard;
  const auto ints = at::device(at::kCUDA).dtype(at::kInt);
  const int64_t words = (int64_t{64} << 20) / 4 + 12;  // 64 MiB and three 16-byte elements more
  at::Tensor data = at::zeros({words}, ints);
  at::Tensor sink = at::zeros({1}, ints);
  const int64_t magic = static_cast<int32_t>(0x9e3779b9u);
  for (int64_t at_word : {int64_t{0}, words / 2 + 5, words - 1}) {
    data.zero_();
    sink.zero_();
    data[at_word] = magic;
    enqueue_read(data.data_ptr(), static_cast<size_t>(words) * 4, sink.data_ptr(), 0,
                 c10::cuda::getCurrentCUDAStream(0).stream());
    EXPECT_EQ(sink.item<int64_t>(), magic) << "word " << at_word << " was not read";
  }
  data.zero_();
  sink.zero_();
  enqueue_read(data.data_ptr(), static_cast<size_t>(words) * 4, sink.data_ptr(), 0,
               c10::cuda::getCurrentCUDAStream(0).stream());
  EXPECT_EQ(sink.item<int64_t>(), 0) << "the sink is written only for the folded value";
#endif
}

TEST(Gpu, GraphCaptureFailureIsAStatusNotACrash) {
  REQUIRE_CUDA();
  RunOptions options;
  options.measurement = quick();
  options.measurement.timing_modes = {TimingMode::graph, TimingMode::batch};
  options.measurement.passes = {Pass::timing};
  test::MeasuringRunner runner(host(), options);
  auto b = std::make_shared<SynchronizingBackend>();
  const BackendRecords r =
      runner.measure({problem(1, 2, 128, 64, DType::bf16, false, Device::cuda), "sync-test"},
                     {"syncs", "", "", b});
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].status, Status::error);
  EXPECT_NE(r.rows[0].reason.find("graph capture failed"), std::string::npos) << r.rows[0].reason;
  EXPECT_EQ(r.rows[1].status, Status::ok)
      << r.rows[1].reason;  // batch still works after the failed capture
}

}  // namespace
}  // namespace attnbench
