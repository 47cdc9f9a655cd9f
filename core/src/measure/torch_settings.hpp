// torch's process-wide settings that a backend can change and the next backend in the same worker
// would inherit (a Python backend's torch.set_num_threads(1), torch.backends.cuda.enable_flash_sdp
// (False), torch.use_deterministic_algorithms(True), torch.backends.cuda.matmul.allow_tf32 = True):
// taken before each (point, backend) is measured and put back after it. Only what changed is set
// back: a setter that is never needed is never called.
#pragma once

#include <array>

namespace attnbench {

struct TorchSettings {
  int threads = 0;
  bool deterministic = false, deterministic_warn_only = false;
  bool cudnn_benchmark = false;
  bool cudnn_enabled = true, cudnn_deterministic = false;
  int cudnn_benchmark_limit = 0;
  // math, efficient, flash, cudnn, overrideable, FA3; then the math kernel's reduced precision
  std::array<bool, 7> sdpa{};
  // TF32 and the like: float32 precision of (generic, all), then CUDA's and MKLDNN's (all, matmul,
  // conv, rnn), as at::Float32Precision; cuBLAS's fp16 and bf16 reductions as
  // at::CuBLASReductionOption, then its fp16 accumulation; the CPU's fp16 reduction
  std::array<int, 9> float32_precision{};
  std::array<int, 3> cublas{};
  bool fp16_reduction_cpu = false;

  static TorchSettings current();
  void restore() const;
};

// Restores the settings it found when it goes out of scope.
class TorchSettingsGuard {
 public:
  TorchSettingsGuard() : saved_(TorchSettings::current()) {}
  ~TorchSettingsGuard() { saved_.restore(); }
  TorchSettingsGuard(const TorchSettingsGuard&) = delete;
  TorchSettingsGuard& operator=(const TorchSettingsGuard&) = delete;

 private:
  TorchSettings saved_;
};

}  // namespace attnbench
