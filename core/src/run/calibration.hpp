// The device's measured ceilings, stored once per device so that rows can report % of peak.
#pragma once

#include "measure/device/host_info.hpp"

#include <optional>
#include <string>

namespace attnbench {

struct Calibration {
  std::string device_name;
  double bf16_matmul_tflops = 0;            // 8192^3 bf16 matrix product on random data
  std::optional<double> fp8_matmul_tflops;  // the same in fp8_e4m3 (at::_scaled_mm); none: no fp8
  double copy_gbps = 0;                     // device-to-device copy, bytes read + written
  std::string torch_version;
  std::string measured_at;
};

// Measures both ceilings on the CUDA device (warm-up, then the median of timed repetitions).
Calibration calibrate_device(const HostInfo& host);

void save_calibration(const Calibration& c, const std::string& path);
std::optional<Calibration> load_calibration(
    const std::string& path);  // nullopt if absent; throws if broken

// results/calibration/<device name as a file name>.json
std::string default_calibration_path(const std::string& device_name);

}  // namespace attnbench
