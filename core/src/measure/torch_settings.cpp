#include "measure/torch_settings.hpp"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

namespace attnbench {

namespace {

using at::Float32Backend;
using at::Float32Op;
// Every (backend, op) PyTorch keeps a float32 precision for: CUDA's and MKLDNN's (the CPU's
// oneDNN: torch.backends.mkldnn.matmul.fp32_precision = "bf16" in one backend would otherwise
// reach the next).
constexpr std::array<std::pair<Float32Backend, Float32Op>, 9> kFloat32Precisions = {{
    {Float32Backend::GENERIC, Float32Op::ALL},
    {Float32Backend::CUDA, Float32Op::ALL},
    {Float32Backend::CUDA, Float32Op::MATMUL},
    {Float32Backend::CUDA, Float32Op::CONV},
    {Float32Backend::CUDA, Float32Op::RNN},
    {Float32Backend::MKLDNN, Float32Op::ALL},
    {Float32Backend::MKLDNN, Float32Op::MATMUL},
    {Float32Backend::MKLDNN, Float32Op::CONV},
    {Float32Backend::MKLDNN, Float32Op::RNN},
}};

// Calls `set(want)` only where it differs from `now`.
template <typename T, typename Set>
void set_back(const T& now, const T& want, Set set) {
  if (now != want) set(want);
}

}  // namespace

TorchSettings TorchSettings::current() {
  const at::Context& ctx = at::globalContext();
  TorchSettings s;
  s.threads = at::get_num_threads();
  s.deterministic = ctx.deterministicAlgorithms();
  s.deterministic_warn_only = ctx.deterministicAlgorithmsWarnOnly();
  s.cudnn_benchmark = ctx.benchmarkCuDNN();
  s.cudnn_enabled = ctx.userEnabledCuDNN();
  s.cudnn_deterministic = ctx.deterministicCuDNN();
  s.cudnn_benchmark_limit = ctx.benchmarkLimitCuDNN();
  s.sdpa = {ctx.userEnabledMathSDP(),         ctx.userEnabledMemEfficientSDP(),
            ctx.userEnabledFlashSDP(),        ctx.userEnabledCuDNNSDP(),
            ctx.userEnabledOverrideableSDP(), ctx.userEnabledFA3SDP(),
            ctx.allowFP16BF16ReductionMathSDP()};
  for (size_t i = 0; i < kFloat32Precisions.size(); ++i)
    s.float32_precision[i] = static_cast<int>(
        ctx.float32Precision(kFloat32Precisions[i].first, kFloat32Precisions[i].second));
  s.cublas = {static_cast<int>(ctx.allowFP16ReductionCuBLAS()),
              static_cast<int>(ctx.allowBF16ReductionCuBLAS()),
              ctx.allowFP16AccumulationCuBLAS() ? 1 : 0};
  s.fp16_reduction_cpu = ctx.allowFP16ReductionCPU();
  return s;
}

void TorchSettings::restore() const {
  at::Context& ctx = at::globalContext();
  const TorchSettings now = current();
  set_back(now.threads, threads, [](int n) { at::set_num_threads(n); });
  if (now.deterministic != deterministic || now.deterministic_warn_only != deterministic_warn_only)
    ctx.setDeterministicAlgorithms(deterministic, deterministic_warn_only);
  set_back(now.cudnn_benchmark, cudnn_benchmark, [&](bool b) { ctx.setBenchmarkCuDNN(b); });
  set_back(now.cudnn_enabled, cudnn_enabled, [&](bool b) { ctx.setUserEnabledCuDNN(b); });
  set_back(now.cudnn_deterministic, cudnn_deterministic,
           [&](bool b) { ctx.setDeterministicCuDNN(b); });
  set_back(now.cudnn_benchmark_limit, cudnn_benchmark_limit,
           [&](int n) { ctx.setBenchmarkLimitCuDNN(n); });
  set_back(now.sdpa[0], sdpa[0], [&](bool b) { ctx.setSDPUseMath(b); });
  set_back(now.sdpa[1], sdpa[1], [&](bool b) { ctx.setSDPUseMemEfficient(b); });
  set_back(now.sdpa[2], sdpa[2], [&](bool b) { ctx.setSDPUseFlash(b); });
  set_back(now.sdpa[3], sdpa[3], [&](bool b) { ctx.setSDPUseCuDNN(b); });
  set_back(now.sdpa[4], sdpa[4], [&](bool b) { ctx.setSDPUseOverrideable(b); });
  set_back(now.sdpa[5], sdpa[5], [&](bool b) { ctx.setSDPUseFA3(b); });
  set_back(now.sdpa[6], sdpa[6], [&](bool b) { ctx.setAllowFP16BF16ReductionMathSDP(b); });
  for (size_t i = 0; i < kFloat32Precisions.size(); ++i)
    set_back(now.float32_precision[i], float32_precision[i], [&](int p) {
      ctx.setFloat32Precision(kFloat32Precisions[i].first, kFloat32Precisions[i].second,
                              static_cast<at::Float32Precision>(p));
    });
  // CuBLASReductionOption: 0 reduced precision and split-K allowed, 1 split-K only, 2 neither.
  set_back(now.cublas[0], cublas[0],
           [&](int o) { ctx.setAllowFP16ReductionCuBLAS(o == 0, o <= 1); });
  set_back(now.cublas[1], cublas[1],
           [&](int o) { ctx.setAllowBF16ReductionCuBLAS(o == 0, o <= 1); });
  set_back(now.cublas[2], cublas[2], [&](int b) { ctx.setAllowFP16AccumulationCuBLAS(b != 0); });
  set_back(now.fp16_reduction_cpu, fp16_reduction_cpu,
           [&](bool b) { ctx.setAllowFP16ReductionCPU(b); });
}

}  // namespace attnbench
