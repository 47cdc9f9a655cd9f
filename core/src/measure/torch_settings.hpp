// torch's process-wide settings that a backend can change and the next backend in the same worker
// would inherit (a Python backend's torch.set_num_threads(1), torch.backends.cuda.enable_flash_sdp
// (False), torch.use_deterministic_algorithms(True)): taken before each (point, backend) is
// measured and put back after it.
#pragma once

#include <array>

namespace attnbench {

struct TorchSettings {
  int threads = 0;
  bool deterministic = false, deterministic_warn_only = false;
  bool cudnn_benchmark = false;
  // math, efficient, flash, cudnn, overrideable, FA3; then the math kernel's reduced precision
  std::array<bool, 7> sdpa{};

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
