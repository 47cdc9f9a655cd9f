#include "measure/torch_settings.hpp"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

namespace attnbench {

TorchSettings TorchSettings::current() {
  const at::Context& ctx = at::globalContext();
  TorchSettings s;
  s.threads = at::get_num_threads();
  s.deterministic = ctx.deterministicAlgorithms();
  s.deterministic_warn_only = ctx.deterministicAlgorithmsWarnOnly();
  s.cudnn_benchmark = ctx.benchmarkCuDNN();
  s.sdpa = {ctx.userEnabledMathSDP(),         ctx.userEnabledMemEfficientSDP(),
            ctx.userEnabledFlashSDP(),        ctx.userEnabledCuDNNSDP(),
            ctx.userEnabledOverrideableSDP(), ctx.userEnabledFA3SDP(),
            ctx.allowFP16BF16ReductionMathSDP()};
  return s;
}

void TorchSettings::restore() const {
  at::Context& ctx = at::globalContext();
  if (at::get_num_threads() != threads) at::set_num_threads(threads);
  ctx.setDeterministicAlgorithms(deterministic, deterministic_warn_only);
  ctx.setBenchmarkCuDNN(cudnn_benchmark);
  ctx.setSDPUseMath(sdpa[0]);
  ctx.setSDPUseMemEfficient(sdpa[1]);
  ctx.setSDPUseFlash(sdpa[2]);
  ctx.setSDPUseCuDNN(sdpa[3]);
  ctx.setSDPUseOverrideable(sdpa[4]);
  ctx.setSDPUseFA3(sdpa[5]);
  ctx.setAllowFP16BF16ReductionMathSDP(sdpa[6]);
}

}  // namespace attnbench
