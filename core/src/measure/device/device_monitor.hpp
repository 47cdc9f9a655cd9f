// The GPU's SM clock, power and temperature, read through NVML (the driver's libnvidia-ml, opened
// at run time: the CPU machine has neither the library nor its header). Read around each timing
// pass: a clock that falls during a pass (sustained load, power or thermal limits) makes its times
// slower than the same kernel at full clock.
#pragma once

#include "measure/pass_results.hpp"

#include <memory>
#include <optional>

namespace attnbench {

class DeviceMonitor {
 public:
  // The NVML device of CUDA device `cuda_device`, found by PCI bus id (NVML's and CUDA's indices
  // need not agree). Without NVML or a GPU, read() gives nullopt.
  explicit DeviceMonitor(int cuda_device);
  ~DeviceMonitor();
  DeviceMonitor(const DeviceMonitor&) = delete;
  DeviceMonitor& operator=(const DeviceMonitor&) = delete;

  std::optional<DeviceState> read() const;
  // The SM clock now, alone (cheaper than read(): once per timing sample).
  std::optional<double> sm_clock_mhz() const;
  // The highest SM clock the GPU runs at (what a rested GPU boosts to under load).
  std::optional<double> max_sm_clock_mhz() const;
  // The board's energy counter: millijoules since the driver loaded (Volta and newer).
  std::optional<unsigned long long> energy_mj() const;
  // Whether another process has a CUDA context on this GPU (ctest -j4, a neighbour's job): the
  // device's free memory is then not this process's alone to judge. False where NVML lists no
  // process (a container that hides them) or cannot list them.
  bool shared_with_another_process() const;

 private:
  struct Nvml;
  std::unique_ptr<Nvml> nvml_;
};

}  // namespace attnbench
