#include "measure/runner.hpp"
#include "measure/torch_settings.hpp"
#include "measure/device/cupti_tracer.hpp"
#include "test_support.hpp"

#include <attnbench/sdpa/textbook_attention.hpp>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <thread>

namespace attnbench {
namespace {

using test::problem;

MeasureSettings quick() { return test::quick_settings(); }

HostInfo cpu_host() {
  HostInfo h;
  h.device_name = "cpu";
  h.torch_version = "test";
  return h;
}

Point point(const Problem& p) { return {p, "test-point"}; }

// Backends defined here, not as plugins: a runner test needs behaviours no real backend has.
class TestBackend : public Backend {
 public:
  enum class Kind { zeros, throws, refuses };
  explicit TestBackend(Kind kind) : kind_(kind) {}
  std::string name() const override { return "test"; }
  std::string description() const override { return "test backend"; }
  Support supports(const Problem&) const override { return Support::yes(); }
  at::Tensor forward(const Inputs& in) override {
    switch (kind_) {
      case Kind::zeros: return at::zeros_like(in.q);
      case Kind::throws: throw std::runtime_error("kernel launch failed: too many resources");
      case Kind::refuses: throw Unsupported("this shape is not for me");
    }
    return {};
  }

 private:
  Kind kind_;
};

LoadedBackend loaded(std::shared_ptr<Backend> b) {
  return {b->name(), b->description(), "(test)", std::move(b)};
}

TEST(Runner, CpuPointFillsWhatAppliesAndLeavesTheRestEmpty) {
  RunOptions options;
  options.measurement = quick();
  options.measurement.max_time_s =
      60;  // bounded by max_samples, not by a clock a loaded machine slows
  options.measurement.max_samples = 5;
  test::MeasuringRunner runner(cpu_host(), options);
  const LoadedBackend* naive = test::plugins().find("naive");
  const BackendRecords r =
      runner.measure(point(problem(1, 2, 64, 16, DType::f32, true, Device::cpu)), *naive);
  ASSERT_EQ(r.rows.size(), 1u);
  const Row& row = r.rows[0];
  EXPECT_EQ(row.status, Status::ok) << row.reason;
  EXPECT_EQ(row.timing_mode, TimingMode::wall);
  ASSERT_TRUE(row.time_ms_median);
  EXPECT_GT(*row.time_ms_median, 0);
  EXPECT_GE(*row.samples, 3);
  EXPECT_LE(*row.time_ms_p10, *row.time_ms_median);
  EXPECT_GE(*row.time_ms_p90, *row.time_ms_median);
  ASSERT_TRUE(row.cpu_us_median);
#if defined(__x86_64__)
  ASSERT_TRUE(row.host_mhz);
  // A clock was read: positive and finite. Not a floor in MHz: the effective clock of a core
  // shared by more jobs than cores (8 on 2) has read 95 MHz.
  EXPECT_GT(*row.host_mhz, 0);
  EXPECT_TRUE(std::isfinite(*row.host_mhz)) << *row.host_mhz;
#endif
  ASSERT_TRUE(row.host_preempted_per_call && row.host_migrated_per_call);
  EXPECT_GE(*row.host_preempted_per_call, 0);
  EXPECT_LE(*row.host_migrated_per_call, 1);
  EXPECT_EQ(*row.aten_ops_per_call, 5);
  EXPECT_EQ(row.aten_ops, "matmul mul masked_fill softmax matmul");
  EXPECT_EQ(*row.aten_copies_per_call, 1);
  EXPECT_LT(*row.rel_err, 1e-5);
  EXPECT_GT(*row.tflops, 0);
  // GPU-only columns do not apply on the CPU: empty, not zero.
  EXPECT_FALSE(row.kernels_per_call);
  EXPECT_FALSE(row.memcpy_per_call);
  EXPECT_FALSE(row.peak_mem_mib);
  EXPECT_FALSE(row.pct_of_peak);
  EXPECT_TRUE(r.kernels.empty());
}

TEST(Runner, TracePassRecordsEachCallsOpsNestedInside) {
  RunOptions options;
  options.measurement = quick();
  options.measurement.passes = {Pass::ops};
  options.measurement.trace = true;
  options.measurement.kernel_pass_iterations = 2;
  test::MeasuringRunner runner(cpu_host(), options);
  const BackendRecords r = runner.measure(
      point(problem(1, 2, 64, 16, DType::f32, true, Device::cpu)), *test::plugins().find("naive"));
  ASSERT_EQ(r.rows.at(0).status, Status::ok) << r.rows.at(0).reason;
  ASSERT_TRUE(r.trace);
  EXPECT_EQ(r.trace->calls, 2);
  std::vector<const TraceEvent*> calls, top;
  int nested = 0;
  for (const TraceEvent& e : r.trace->events) {
    EXPECT_EQ(e.lane, TraceLane::host);
    if (e.category == "call") calls.push_back(&e);
    if (e.category == "cpu_op" && e.args.at(0).second == "0") top.push_back(&e);
    if (e.category == "cpu_op" && e.args.at(0).second != "0") ++nested;
  }
  ASSERT_EQ(calls.size(), 2u);
  // The study's five ops and the transpose view, once per call, each inside its call.
  std::string names;
  for (size_t i = 0; i < top.size() / 2; ++i) names += (i ? " " : "") + top[i]->name;
  EXPECT_EQ(names, "transpose matmul mul masked_fill softmax matmul");
  ASSERT_EQ(top.size(), 12u);
  for (size_t i = 0; i < top.size(); ++i) {
    const TraceEvent& call = *calls[i / 6];
    EXPECT_GE(top[i]->start_us, call.start_us) << top[i]->name;
    EXPECT_LE(top[i]->start_us + top[i]->duration_us, call.start_us + call.duration_us);
  }
  EXPECT_GT(nested, 0) << "ops call ops (matmul -> mm)";
}

TEST(Runner, WrongOutputIsStatusWrongWithTheError) {
  RunOptions options;
  options.measurement = quick();
  test::MeasuringRunner runner(cpu_host(), options);
  const BackendRecords r =
      runner.measure(point(problem(1, 1, 32, 16, DType::f32, false, Device::cpu)),
                     loaded(std::make_shared<TestBackend>(TestBackend::Kind::zeros)));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].status, Status::wrong);
  EXPECT_NE(r.rows[0].reason.find("above the fp32 tolerance"), std::string::npos)
      << r.rows[0].reason;
  EXPECT_TRUE(r.rows[0].time_ms_median);  // still timed: a wrong answer's speed is still a fact
}

TEST(Runner, ThrowingAndRefusingBackendsBecomeStatuses) {
  RunOptions options;
  options.measurement = quick();
  test::MeasuringRunner runner(cpu_host(), options);
  const Point p = point(problem(1, 1, 32, 16, DType::f32, true, Device::cpu));
  const BackendRecords thrown =
      runner.measure(p, loaded(std::make_shared<TestBackend>(TestBackend::Kind::throws)));
  EXPECT_EQ(thrown.rows.at(0).status, Status::error);
  EXPECT_EQ(thrown.rows.at(0).reason, "first call: kernel launch failed: too many resources");
  const BackendRecords refused =
      runner.measure(p, loaded(std::make_shared<TestBackend>(TestBackend::Kind::refuses)));
  EXPECT_EQ(refused.rows.at(0).status, Status::unsupported);
  EXPECT_EQ(refused.rows.at(0).reason, "this shape is not for me");
  EXPECT_FALSE(refused.rows.at(0).time_ms_median);
}

TEST(Runner, UnsupportedByTheBackendSaysWhy) {
  RunOptions options;
  options.measurement = quick();
  test::MeasuringRunner runner(cpu_host(), options);
  const BackendRecords r = runner.measure(
      point(problem(1, 1, 64, 64, DType::bf16, true, Device::cpu)), *test::plugins().find("flash"));
  EXPECT_EQ(r.rows.at(0).status, Status::unsupported);
  EXPECT_NE(r.rows.at(0).reason.find("CUDA kernel"), std::string::npos);
}

TEST(Runner, CudaPointWithoutCudaIsUnsupportedInEveryMode) {
  RunOptions options;
  options.measurement = quick();
  options.measurement.timing_modes = {TimingMode::cold, TimingMode::batch};
  test::MeasuringRunner runner(cpu_host(), options);  // a host without CUDA, whatever this machine has
  const BackendRecords r =
      runner.measure(point(problem(1, 1, 64, 64, DType::bf16, true, Device::cuda)),
                     *test::plugins().find("naive"));
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].timing_mode, TimingMode::cold);
  EXPECT_EQ(r.rows[1].timing_mode, TimingMode::batch);
  for (const auto& row : r.rows) {
    EXPECT_EQ(row.status, Status::unsupported);
    EXPECT_EQ(row.reason, "no CUDA device on this machine");
  }
}

// Caps this process's address space a little above what it uses now, for the test's duration:
// an allocation past it fails at once on every machine, whatever the kernel's overcommit policy.
class AddressSpaceCap {
 public:
  explicit AddressSpaceCap(size_t headroom_bytes) {
    getrlimit(RLIMIT_AS, &saved_);
    size_t pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    rlimit capped = saved_;
    capped.rlim_cur =
        static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + headroom_bytes;
    setrlimit(RLIMIT_AS, &capped);
  }
  ~AddressSpaceCap() { setrlimit(RLIMIT_AS, &saved_); }

 private:
  rlimit saved_{};
};

TEST(Runner, HostAllocationFailureIsOom) {
  RunOptions options;
  options.measurement = quick();
  test::MeasuringRunner runner(cpu_host(), options);
  const AddressSpaceCap cap(size_t{4} << 30);
  // The inputs are small; the scores are 2^20 x 2^20 bf16, 2 TiB: past the cap.
  const BackendRecords r =
      runner.measure(point(problem(1, 1, int64_t{1} << 20, 1, DType::bf16, false, Device::cpu)),
                     *test::plugins().find("naive"));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].status, Status::oom) << r.rows[0].reason;
  EXPECT_EQ(r.rows[0].reason.rfind("first call: ", 0), 0u) << r.rows[0].reason;
}

TEST(Runner, ToldEachPassAsItStarts) {
  RunOptions options;
  options.measurement = quick();
  std::vector<std::string> passes;
  options.on_pass = [&](const std::string& name) { passes.push_back(name); };
  test::MeasuringRunner runner(cpu_host(), options);
  runner.measure(point(problem(1, 1, 32, 16, DType::f32, true, Device::cpu)),
                 *test::plugins().find("naive"));
  EXPECT_EQ(passes, (std::vector<std::string>{"supports", "first call", "correctness", "warm-up",
                                              "input check", "wall", "cpu", "fresh inputs",
                                              "ops"}));
}

// Writes into its inputs: zeroes v and returns zeros (right for what it left), scales q before
// computing (right for the scaled q), or changes k in its third call (the warm-up's first,
// whatever the machine's speed).
class InputWriter : public Backend {
 public:
  enum class Kind { zeroes_v, scales_q, changes_k_later };
  explicit InputWriter(Kind kind) : kind_(kind) {}
  std::string name() const override { return "input-writer"; }
  std::string description() const override { return "writes into its inputs"; }
  Support supports(const Problem&) const override { return Support::yes(); }
  at::Tensor forward(const Inputs& in) override {
    ++calls_;
    if (kind_ == Kind::zeroes_v) {
      in.v.zero_();
      return at::zeros_like(in.q);
    }
    if (kind_ == Kind::scales_q) in.q.mul_(0.5);
    if (kind_ == Kind::changes_k_later && calls_ == 3) in.k.add_(1);  // the first warm-up call
    return textbook_attention(in, false);
  }

 private:
  Kind kind_;
  int calls_ = 0;
};

// Changes torch's process-wide settings in its call, as a Python backend may
// (torch.set_num_threads(1), use_deterministic_algorithms, enable_flash_sdp(False), allow_tf32,
// cudnn.enabled, cuBLAS's reduced precision); or records what it finds.
class SettingsChanger : public Backend {
 public:
  explicit SettingsChanger(bool changes) : changes_(changes) {}
  std::string name() const override { return changes_ ? "changer" : "reader"; }
  std::string description() const override { return "torch's settings"; }
  Support supports(const Problem&) const override { return Support::yes(); }
  at::Tensor forward(const Inputs& in) override {
    if (changes_) {
      at::Context& ctx = at::globalContext();
      at::set_num_threads(1);
      ctx.setDeterministicAlgorithms(true, true);
      ctx.setBenchmarkCuDNN(!ctx.benchmarkCuDNN());
      ctx.setSDPUseMath(!ctx.userEnabledMathSDP());
      ctx.setSDPUseMemEfficient(!ctx.userEnabledMemEfficientSDP());
      ctx.setSDPUseFlash(!ctx.userEnabledFlashSDP());
      ctx.setSDPUseCuDNN(!ctx.userEnabledCuDNNSDP());
      ctx.setSDPUseOverrideable(!ctx.userEnabledOverrideableSDP());
      ctx.setSDPUseFA3(!ctx.userEnabledFA3SDP());
      ctx.setAllowFP16BF16ReductionMathSDP(!ctx.allowFP16BF16ReductionMathSDP());
      ctx.setFloat32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL,
                              at::Float32Precision::TF32);
      ctx.setUserEnabledCuDNN(!ctx.userEnabledCuDNN());
      ctx.setDeterministicCuDNN(!ctx.deterministicCuDNN());
      ctx.setBenchmarkLimitCuDNN(ctx.benchmarkLimitCuDNN() + 3);
      ctx.setAllowBF16ReductionCuBLAS(false, false);
      ctx.setAllowFP16AccumulationCuBLAS(!ctx.allowFP16AccumulationCuBLAS());
    }
    threads_seen = at::get_num_threads();
    return textbook_attention(in, false);
  }
  int threads_seen = 0;

 private:
  bool changes_;
};

TEST(Runner, WhatABackendChangesOfTorchsSettingsTheNextOneNeverSees) {
  if (at::get_num_threads() < 2) GTEST_SKIP() << "skipped: one thread here, nothing to change";
  RunOptions options;
  options.measurement = quick();
  test::MeasuringRunner runner(cpu_host(), options);
  const int threads = at::get_num_threads();
  const at::Context& ctx = at::globalContext();
  auto switches = [&] {
    return std::vector<int>{
        ctx.deterministicAlgorithms(),
        ctx.benchmarkCuDNN(),
        ctx.userEnabledMathSDP(),
        ctx.userEnabledMemEfficientSDP(),
        ctx.userEnabledFlashSDP(),
        ctx.userEnabledCuDNNSDP(),
        ctx.userEnabledOverrideableSDP(),
        ctx.userEnabledFA3SDP(),
        ctx.allowFP16BF16ReductionMathSDP(),
        static_cast<int>(ctx.float32Precision(at::Float32Backend::CUDA, at::Float32Op::MATMUL)),
        ctx.userEnabledCuDNN(),
        ctx.deterministicCuDNN(),
        ctx.benchmarkLimitCuDNN(),
        static_cast<int>(ctx.allowBF16ReductionCuBLAS()),
        ctx.allowFP16AccumulationCuBLAS()};
  };
  const std::vector<int> before = switches();
  const Point p = point(problem(1, 2, 32, 16, DType::f32, true, Device::cpu));
  auto changer = std::make_shared<SettingsChanger>(true);
  auto reader = std::make_shared<SettingsChanger>(false);
  runner.measure(p, loaded(changer));
  EXPECT_EQ(changer->threads_seen, 1);
  runner.measure(p, loaded(reader));
  EXPECT_EQ(reader->threads_seen, threads);
  EXPECT_EQ(switches(), before);
}

// Out of memory however a library words it: PyTorch's allocator, the driver's error, the
// runtime's; any other exception is an error. A pass that fails ends the passes after it.
TEST(Runner, OutOfMemoryIsReadFromEachWordingAndAFailureEndsThePasses) {
  class Throws : public Backend {
   public:
    explicit Throws(std::string what) : what_(std::move(what)) {}
    std::string name() const override { return "throws"; }
    std::string description() const override { return "throws on its second call"; }
    Support supports(const Problem&) const override { return Support::yes(); }
    at::Tensor forward(const Inputs& in) override {
      if (++calls_ == 2) throw std::runtime_error(what_);
      return textbook_attention(in, false);
    }

   private:
    std::string what_;
    int calls_ = 0;
  };
  RunOptions options;
  options.measurement = quick();
  std::vector<std::string> passes;
  options.on_pass = [&](const std::string& name) { passes.push_back(name); };
  test::MeasuringRunner runner(cpu_host(), options);
  const Point p = point(problem(1, 2, 32, 16, DType::f32, true, Device::cpu));
  for (const auto& [what, status] :
       {std::pair{"CUDA out of memory. Tried to allocate 2.00 GiB", Status::oom},
        {"cuModuleLoad: CUDA_ERROR_OUT_OF_MEMORY", Status::oom},
        {"cudaErrorMemoryAllocation in a graph capture", Status::oom},
        {"a kernel failed", Status::error}}) {
    passes.clear();
    const BackendRecords r = runner.measure(p, loaded(std::make_shared<Throws>(what)));
    EXPECT_EQ(r.rows.at(0).status, status) << what << ": " << r.rows.at(0).reason;
    EXPECT_EQ(r.rows.at(0).reason, std::string("correctness: ") + what);
    EXPECT_EQ(passes, (std::vector<std::string>{"supports", "first call", "correctness"})) << what;
  }
}

TEST(Runner, ABackendThatWritesIntoItsInputsIsWrongNamingTheInput) {
  RunOptions options;
  options.measurement = quick();
  test::MeasuringRunner runner(cpu_host(), options);
  const Point p = point(problem(1, 2, 32, 16, DType::f32, true, Device::cpu));
  for (const auto& [kind, input] : {std::pair{InputWriter::Kind::zeroes_v, "v"},
                                    {InputWriter::Kind::scales_q, "q"},
                                    {InputWriter::Kind::changes_k_later, "k"}}) {
    const BackendRecords r = runner.measure(p, loaded(std::make_shared<InputWriter>(kind)));
    ASSERT_EQ(r.rows.size(), 1u);
    EXPECT_EQ(r.rows[0].status, Status::wrong) << input;
    EXPECT_NE(r.rows[0].reason.find(std::string("wrote into its input ") + input + " "),
              std::string::npos)
        << r.rows[0].reason;
  }
  // The same calls without the writes: ok.
  const BackendRecords clean = runner.measure(p, *test::plugins().find("naive"));
  EXPECT_EQ(clean.rows.at(0).status, Status::ok) << clean.rows.at(0).reason;
}

// Keyed on its inputs' values: computes when q's bytes are new, else returns what it computed
// for them (always right, and fast wherever a benchmark repeats its inputs).
class ValueKeyedCache : public Backend {
 public:
  std::string name() const override { return "value-keyed"; }
  std::string description() const override { return "caches its output by q's values"; }
  Support supports(const Problem&) const override { return Support::yes(); }
  at::Tensor forward(const Inputs& in) override {
    const at::Tensor q = in.q.contiguous();
    std::string key(static_cast<const char*>(q.data_ptr()), q.nbytes());
    auto [it, fresh] = outputs_.try_emplace(key);
    if (fresh) it->second = textbook_attention(in, /*mask_in_place=*/true);
    (fresh ? computed : cached)[pass]++;
    return it->second;
  }
  std::string pass;
  std::map<std::string, int> computed, cached;

 private:
  std::map<std::string, at::Tensor> outputs_;
};

// Every timed call meets values it has not seen: q moves before each sample, so a value-keyed
// cache computes in every timed call (it hits only where the untimed passes repeat inputs).
TEST(Runner, EveryTimedCallMeetsNewValues) {
  auto backend = std::make_shared<ValueKeyedCache>();
  RunOptions options;
  options.measurement = quick();
  options.on_pass = [&](const std::string& name) { backend->pass = name; };
  test::MeasuringRunner runner(cpu_host(), options);
  const BackendRecords r =
      runner.measure(point(problem(1, 2, 32, 16, DType::f32, true, Device::cpu)), loaded(backend));
  ASSERT_EQ(r.rows.size(), 1u);
  // The checked call met the same values as the first and got the cached tensor back, which the
  // harness had poisoned: handing out one tensor twice is caught too.
  EXPECT_EQ(r.rows[0].status, Status::wrong) << r.rows[0].reason;
  // How many samples the pass takes is the machine's speed; that each one computed is not (wall
  // mode: one call a sample).
  ASSERT_TRUE(r.rows[0].samples);
  EXPECT_EQ(backend->computed["wall"], *r.rows[0].samples);
  EXPECT_EQ(backend->cached["wall"], 0);
  EXPECT_GT(backend->cached["warm-up"], 0);  // the same inputs again: the cache does hit there
}

// Right where a fixed slice would look, wrong elsewhere: the whole output is checked (float32 on
// every row of every head and sequence), so each of these is `wrong`.
class PartialOutput : public Backend {
 public:
  enum class Leaves { middle_sequences, one_head, rows_between_the_old_check };
  explicit PartialOutput(Leaves leaves) : leaves_(leaves) {}
  std::string name() const override { return "partial"; }
  std::string description() const override { return "computes part of the output"; }
  Support supports(const Problem&) const override { return Support::yes(); }
  at::Tensor forward(const Inputs& in) override {
    at::Tensor out = textbook_attention(in, /*mask_in_place=*/true);
    const int64_t batch = out.size(0), seq = out.size(2);
    switch (leaves_) {
      case Leaves::middle_sequences: out.narrow(0, 1, batch - 2).zero_(); break;
      case Leaves::one_head: out.select(1, 1).zero_(); break;
      case Leaves::rows_between_the_old_check: {  // only the 64 rows linspace(0, seq - 1) kept
        const at::Tensor kept =
            at::linspace(0, static_cast<double>(seq - 1), 64, at::kDouble).round().to(at::kLong);
        at::Tensor partial = at::zeros_like(out);
        partial.index_copy_(2, kept, out.index_select(2, kept));
        out = partial;
        break;
      }
    }
    return out;
  }

 private:
  Leaves leaves_;
};

TEST(Runner, APartialOutputIsWrongWhereverItsHolesAre) {
  RunOptions options;
  options.measurement = quick();
  options.measurement.passes = {Pass::correctness};
  test::MeasuringRunner runner(cpu_host(), options);
  const Point p = point(problem(6, 4, 256, 16, DType::f32, true, Device::cpu));
  for (auto leaves : {PartialOutput::Leaves::middle_sequences, PartialOutput::Leaves::one_head,
                      PartialOutput::Leaves::rows_between_the_old_check}) {
    const BackendRecords r = runner.measure(p, loaded(std::make_shared<PartialOutput>(leaves)));
    EXPECT_EQ(r.rows.at(0).status, Status::wrong) << static_cast<int>(leaves);
    EXPECT_GT(*r.rows.at(0).rel_err, 0.5) << static_cast<int>(leaves);
  }
}

// Writes into a buffer of its own that it hands back each call, but only its first half of rows
// after the first call (the rest still holds the first call's answer, right for those inputs):
// the checked call finds that half poisoned.
class HalfWrittenBuffer : public Backend {
 public:
  std::string name() const override { return "half-written"; }
  std::string description() const override { return "writes half of a kept output buffer"; }
  Support supports(const Problem&) const override { return Support::yes(); }
  at::Tensor forward(const Inputs& in) override {
    const at::Tensor full = textbook_attention(in, /*mask_in_place=*/true);
    if (!buffer_.defined()) {
      buffer_ = full.clone();
    } else {
      const int64_t half = full.size(2) / 2;
      buffer_.narrow(2, 0, half).copy_(full.narrow(2, 0, half));
    }
    return buffer_;
  }

 private:
  at::Tensor buffer_;
};

TEST(Runner, AnOutputNoCallWroteIsPoisonedAndFails) {
  RunOptions options;
  options.measurement = quick();
  options.measurement.passes = {Pass::correctness};
  test::MeasuringRunner runner(cpu_host(), options);
  const BackendRecords r =
      runner.measure(point(problem(2, 2, 64, 16, DType::f32, true, Device::cpu)),
                     loaded(std::make_shared<HalfWrittenBuffer>()));
  EXPECT_EQ(r.rows.at(0).status, Status::wrong);
  EXPECT_TRUE(std::isnan(*r.rows.at(0).rel_err) || *r.rows.at(0).rel_err > 1) << *r.rows.at(0).rel_err;
}

// Backward: after its first call fills dq, dk and dv, it computes dq only and leaves dk and dv as
// they were (right, for the same inputs): poisoned before the checked call, they fail.
class StaleGradients : public Backend {
 public:
  std::string name() const override { return "stale-gradients"; }
  std::string description() const override { return "leaves dk and dv after the first call"; }
  Support supports(const Problem&) const override { return Support::yes(); }
  at::Tensor forward(const Inputs& in) override { return test::backend("naive").forward(in); }
  std::unique_ptr<BackwardPass> prepare_backward(const Inputs& in) override {
    struct Pass : BackwardPass {
      std::unique_ptr<BackwardPass> inner;
      bool first = true;
      void run(const at::Tensor& grad_out, at::Tensor& dq, at::Tensor& dk, at::Tensor& dv) override {
        if (first) {
          inner->run(grad_out, dq, dk, dv);
          first = false;
          return;
        }
        at::Tensor q_grad, k_grad, v_grad;
        inner->run(grad_out, q_grad, k_grad, v_grad);
        dq.copy_(q_grad);
      }
    };
    auto pass = std::make_unique<Pass>();
    pass->inner = test::backend("naive").prepare_backward(in);
    return pass;
  }
};

TEST(Runner, GradientsABackwardLeftUnwrittenFail) {
  RunOptions options;
  options.measurement = quick();
  options.measurement.passes = {Pass::correctness};
  test::MeasuringRunner runner(cpu_host(), options);
  const BackendRecords r = runner.measure(
      point(test::backward(problem(1, 2, 32, 16, DType::f32, true, Device::cpu))),
      loaded(std::make_shared<StaleGradients>()));
  EXPECT_EQ(r.rows.at(0).status, Status::wrong) << r.rows.at(0).reason;
  const BackendRecords honest = runner.measure(
      point(test::backward(problem(1, 2, 32, 16, DType::f32, true, Device::cpu))),
      *test::plugins().find("naive"));
  EXPECT_EQ(honest.rows.at(0).status, Status::ok) << honest.rows.at(0).reason;
}

TEST(Runner, KeepsRawSamplesOnRequest) {
  RunOptions options;
  options.measurement = quick();
  options.measurement.keep_samples = true;
  test::MeasuringRunner runner(cpu_host(), options);
  const BackendRecords r =
      runner.measure(point(problem(1, 1, 32, 16, DType::f32, true, Device::cpu)),
                     *test::plugins().find("inplace"));
  ASSERT_EQ(r.samples.size(), 1u);
  EXPECT_EQ(static_cast<int64_t>(r.samples[0].time_ms.size()), *r.rows[0].samples);
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// A backend whose first call takes 250 ms longer than the others (a JIT, a plan search): what
// first_call_ms must see, in milliseconds.
class SlowFirstCall : public Backend {
 public:
  std::string name() const override { return "slow-first"; }
  std::string description() const override { return "sleeps in its first call"; }
  Support supports(const Problem&) const override { return Support::yes(); }
  at::Tensor forward(const Inputs& in) override {
    if (calls_++ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(250));
    return textbook_attention(in, /*mask_in_place=*/true);
  }

 private:
  int calls_ = 0;
};

TEST(Runner, FirstCallMillisecondsIncludeWhatTheFirstCallDid) {
  RunOptions options;
  options.measurement = quick();
  options.measurement.passes = {Pass::correctness};
  test::MeasuringRunner runner(cpu_host(), options);
  const BackendRecords r =
      runner.measure(point(problem(1, 1, 32, 16, DType::f32, true, Device::cpu)),
                     loaded(std::make_shared<SlowFirstCall>()));
  const Row& row = r.rows.at(0);
  ASSERT_EQ(row.status, Status::ok) << row.reason;
  // At least the 250 ms slept (a lower bound no machine can undercut); a value in seconds would
  // be 0.25, one in microseconds 250000.
  EXPECT_GE(*row.first_call_ms, 250);
  EXPECT_LT(*row.first_call_ms, 25000);
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// Each of torch's settings that TorchSettingsGuard keeps, changed alone inside a guard (as one
// backend would), is back as it was after it, and nothing else moved: read here through
// at::Context's own getters, not through TorchSettings. Each is changed to a value other than
// its current one, so a setting the guard skips stays changed.
TEST(TorchSettingsGuard, PutsBackEachSettingChangedAlone) {
  at::Context& ctx = at::globalContext();
  using at::Float32Backend;
  using at::Float32Op;
  using at::Float32Precision;
  auto snapshot = [&] {
    return std::vector<int>{
        at::get_num_threads(),
        ctx.deterministicAlgorithms(),
        ctx.deterministicAlgorithmsWarnOnly(),
        ctx.benchmarkCuDNN(),
        ctx.userEnabledCuDNN(),
        ctx.deterministicCuDNN(),
        ctx.benchmarkLimitCuDNN(),
        ctx.userEnabledMathSDP(),
        ctx.userEnabledMemEfficientSDP(),
        ctx.userEnabledFlashSDP(),
        ctx.userEnabledCuDNNSDP(),
        ctx.userEnabledOverrideableSDP(),
        ctx.userEnabledFA3SDP(),
        ctx.allowFP16BF16ReductionMathSDP(),
        static_cast<int>(ctx.float32Precision(Float32Backend::GENERIC, Float32Op::ALL)),
        static_cast<int>(ctx.float32Precision(Float32Backend::CUDA, Float32Op::MATMUL)),
        static_cast<int>(ctx.float32Precision(Float32Backend::CUDA, Float32Op::CONV)),
        static_cast<int>(ctx.float32Precision(Float32Backend::CUDA, Float32Op::RNN)),
        static_cast<int>(ctx.float32Precision(Float32Backend::CUDA, Float32Op::ALL)),
        static_cast<int>(ctx.float32Precision(Float32Backend::MKLDNN, Float32Op::ALL)),
        static_cast<int>(ctx.float32Precision(Float32Backend::MKLDNN, Float32Op::MATMUL)),
        static_cast<int>(ctx.float32Precision(Float32Backend::MKLDNN, Float32Op::CONV)),
        static_cast<int>(ctx.float32Precision(Float32Backend::MKLDNN, Float32Op::RNN)),
        static_cast<int>(ctx.allowFP16ReductionCPU()),
        static_cast<int>(ctx.allowFP16ReductionCuBLAS()),
        static_cast<int>(ctx.allowBF16ReductionCuBLAS()),
        static_cast<int>(ctx.allowFP16AccumulationCuBLAS())};
  };
  // A precision other than the current one.
  auto other = [&](Float32Backend b, Float32Op op) {
    return ctx.float32Precision(b, op) == Float32Precision::TF32 ? Float32Precision::IEEE
                                                                  : Float32Precision::TF32;
  };
  // oneDNN's: bf16 or ieee.
  auto other_cpu = [&](Float32Op op) {
    return ctx.float32Precision(Float32Backend::MKLDNN, op) == Float32Precision::BF16
               ? Float32Precision::IEEE
               : Float32Precision::BF16;
  };
  // The next of the three cuBLAS reduction options: (reduced precision, split-K) allowed.
  auto next_reduction = [](at::CuBLASReductionOption o) {
    switch (o) {
      case at::CuBLASReductionOption::AllowReducedPrecisionWithSplitK: return std::pair{false, true};
      case at::CuBLASReductionOption::DisallowReducedPrecisionAllowSplitK:
        return std::pair{false, false};
      default: return std::pair{true, true};
    }
  };
  const std::vector<std::pair<std::string, std::function<void()>>> changes = {
      {"threads", [&] { at::set_num_threads(at::get_num_threads() == 1 ? 2 : 1); }},
      {"deterministic",
       [&] { ctx.setDeterministicAlgorithms(!ctx.deterministicAlgorithms(), ctx.deterministicAlgorithmsWarnOnly()); }},
      {"cudnn benchmark", [&] { ctx.setBenchmarkCuDNN(!ctx.benchmarkCuDNN()); }},
      {"cudnn enabled", [&] { ctx.setUserEnabledCuDNN(!ctx.userEnabledCuDNN()); }},
      {"cudnn deterministic", [&] { ctx.setDeterministicCuDNN(!ctx.deterministicCuDNN()); }},
      {"cudnn benchmark limit", [&] { ctx.setBenchmarkLimitCuDNN(ctx.benchmarkLimitCuDNN() + 7); }},
      {"math sdp", [&] { ctx.setSDPUseMath(!ctx.userEnabledMathSDP()); }},
      {"mem-efficient sdp", [&] { ctx.setSDPUseMemEfficient(!ctx.userEnabledMemEfficientSDP()); }},
      {"flash sdp", [&] { ctx.setSDPUseFlash(!ctx.userEnabledFlashSDP()); }},
      {"cudnn sdp", [&] { ctx.setSDPUseCuDNN(!ctx.userEnabledCuDNNSDP()); }},
      {"overrideable sdp", [&] { ctx.setSDPUseOverrideable(!ctx.userEnabledOverrideableSDP()); }},
      {"fa3 sdp", [&] { ctx.setSDPUseFA3(!ctx.userEnabledFA3SDP()); }},
      {"math sdp fp16/bf16 reduction",
       [&] { ctx.setAllowFP16BF16ReductionMathSDP(!ctx.allowFP16BF16ReductionMathSDP()); }},
      {"fp32 precision generic",
       [&] {
         ctx.setFloat32Precision(Float32Backend::GENERIC, Float32Op::ALL,
                                 ctx.float32Precision(Float32Backend::GENERIC, Float32Op::ALL) ==
                                         Float32Precision::NONE
                                     ? Float32Precision::IEEE
                                     : Float32Precision::NONE);
       }},
      {"tf32 cuda matmul",
       [&] {
         ctx.setFloat32Precision(Float32Backend::CUDA, Float32Op::MATMUL,
                                 other(Float32Backend::CUDA, Float32Op::MATMUL));
       }},
      {"tf32 cuda conv",
       [&] {
         ctx.setFloat32Precision(Float32Backend::CUDA, Float32Op::CONV,
                                 other(Float32Backend::CUDA, Float32Op::CONV));
       }},
      {"tf32 cuda rnn",
       [&] {
         ctx.setFloat32Precision(Float32Backend::CUDA, Float32Op::RNN,
                                 other(Float32Backend::CUDA, Float32Op::RNN));
       }},
      {"tf32 cuda all",
       [&] {
         ctx.setFloat32Precision(Float32Backend::CUDA, Float32Op::ALL,
                                 other(Float32Backend::CUDA, Float32Op::ALL));
       }},
      {"mkldnn all", [&] { ctx.setFloat32Precision(Float32Backend::MKLDNN, Float32Op::ALL, other_cpu(Float32Op::ALL)); }},
      {"mkldnn matmul", [&] { ctx.setFloat32Precision(Float32Backend::MKLDNN, Float32Op::MATMUL, other_cpu(Float32Op::MATMUL)); }},
      {"mkldnn conv", [&] { ctx.setFloat32Precision(Float32Backend::MKLDNN, Float32Op::CONV, other_cpu(Float32Op::CONV)); }},
      {"mkldnn rnn", [&] { ctx.setFloat32Precision(Float32Backend::MKLDNN, Float32Op::RNN, other_cpu(Float32Op::RNN)); }},
      {"cpu fp16 reduction", [&] { ctx.setAllowFP16ReductionCPU(!ctx.allowFP16ReductionCPU()); }},
      {"cublas fp16 reduction",
       [&] {
         const auto [reduced, splitk] = next_reduction(ctx.allowFP16ReductionCuBLAS());
         ctx.setAllowFP16ReductionCuBLAS(reduced, splitk);
       }},
      {"cublas bf16 reduction",
       [&] {
         const auto [reduced, splitk] = next_reduction(ctx.allowBF16ReductionCuBLAS());
         ctx.setAllowBF16ReductionCuBLAS(reduced, splitk);
       }},
      {"cublas fp16 accumulation",
       [&] { ctx.setAllowFP16AccumulationCuBLAS(!ctx.allowFP16AccumulationCuBLAS()); }},
  };
  const std::vector<int> before = snapshot();
  for (const auto& [name, change] : changes) {
    {
      const TorchSettingsGuard guard;
      try {
        change();
      } catch (const c10::Error&) {  // the CPU's fp16 reduction, where the CPU has no fp16
        continue;
      }
      EXPECT_NE(snapshot(), before) << name << ": the change changed nothing, so tests nothing";
    }
    EXPECT_EQ(snapshot(), before) << name << " was not put back";
  }
  // warn_only alone, deterministic already on.
  ctx.setDeterministicAlgorithms(true, false);
  const std::vector<int> deterministic = snapshot();
  {
    const TorchSettingsGuard guard;
    ctx.setDeterministicAlgorithms(true, true);
  }
  EXPECT_EQ(snapshot(), deterministic) << "deterministic warn only was not put back";
  ctx.setDeterministicAlgorithms(before[1] != 0, before[2] != 0);
  ASSERT_EQ(snapshot(), before);
  // Each cuBLAS reduction option (three of them) is put back from each other one, fp16's and
  // bf16's alike.
  for (bool bf16 : {false, true})
    for (int from = 0; from < 3; ++from)
      for (int to = 0; to < 3; ++to) {
        auto set = [&](int o) {
          if (bf16)
            ctx.setAllowBF16ReductionCuBLAS(o == 0, o <= 1);
          else
            ctx.setAllowFP16ReductionCuBLAS(o == 0, o <= 1);
        };
        auto get = [&] {
          return static_cast<int>(bf16 ? ctx.allowBF16ReductionCuBLAS()
                                       : ctx.allowFP16ReductionCuBLAS());
        };
        set(from);
        ASSERT_EQ(get(), from);
        {
          const TorchSettingsGuard guard;
          set(to);
        }
        EXPECT_EQ(get(), from) << (bf16 ? "bf16" : "fp16") << " from " << from << " to " << to;
      }
  ctx.setAllowFP16ReductionCuBLAS(before[18] == 0, before[18] <= 1);
  ctx.setAllowBF16ReductionCuBLAS(before[19] == 0, before[19] <= 1);
  EXPECT_EQ(snapshot(), before);
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// Records the bytes of q, k and v each call met, by the pass it was called in.
class InputRecorder : public Backend {
 public:
  std::string name() const override { return "input-recorder"; }
  std::string description() const override { return "records its inputs' values"; }
  Support supports(const Problem&) const override { return Support::yes(); }
  at::Tensor forward(const Inputs& in) override {
    for (const auto& [name, t] : {std::pair{"q", &in.q}, {"k", &in.k}, {"v", &in.v}}) {
      const at::Tensor c = t->contiguous();
      seen[pass][name].insert(std::string(static_cast<const char*>(c.data_ptr()), c.nbytes()));
    }
    return textbook_attention(in, false);
  }
  std::string pass;
  std::map<std::string, std::map<std::string, std::set<std::string>>> seen;  // pass, input
};

// The fresh-inputs pass draws q, k and v anew from a seed of its own: none of the three holds the
// values the first call or the correctness check met (drawn from the point's seed), so a backend
// that kept what it computed for those values cannot pass it.
TEST(Runner, TheFreshInputsAreDrawnFromAnotherSeedThanTheFirst) {
  auto backend = std::make_shared<InputRecorder>();
  RunOptions options;
  options.measurement = quick();
  options.on_pass = [&](const std::string& name) { backend->pass = name; };
  test::MeasuringRunner runner(cpu_host(), options);
  const BackendRecords r =
      runner.measure(point(problem(1, 2, 32, 16, DType::f32, true, Device::cpu)), loaded(backend));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].status, Status::ok) << r.rows[0].reason;
  ASSERT_TRUE(backend->seen.count("fresh inputs")) << "no call in the fresh-inputs pass";
  ASSERT_TRUE(backend->seen.count("first call"));
  for (const char* input : {"q", "k", "v"}) {
    const std::set<std::string>& fresh = backend->seen["fresh inputs"][input];
    ASSERT_FALSE(fresh.empty()) << input;
    for (const char* earlier : {"first call", "correctness"})
      for (const std::string& values : backend->seen[earlier][input])
        EXPECT_EQ(fresh.count(values), 0u) << input << " in the fresh-inputs pass holds the values "
                                           << earlier << " met";
  }
}

}  // namespace
}  // namespace attnbench
