// The device's measured ceilings: what `attnbench calibrate` measures and rows are judged against
// (% of peak, % of bandwidth). The file they are kept in: run/calibration.hpp.
#pragma once

#include "measure/device/host_info.hpp"

#include <algorithm>
#include <optional>
#include <string>

namespace attnbench {

struct Calibration {
  std::string device_name;
  double bf16_matmul_tflops = 0;            // 8192^3 bf16 matrix product on random data
  std::optional<double> fp8_matmul_tflops;  // the same in fp8_e4m3 (at::_scaled_mm); none: no fp8
  double copy_gbps = 0;                     // device-to-device copy, bytes read + written
  std::optional<double> read_gbps;          // reads only: the fastest of the `reads`
  std::string reads = "a bf16 sum and an int32 max";  // what read_gbps is the fastest of
  // What rows' pct_of_bandwidth is against: the faster of the two (a kernel that mostly reads,
  // as decode does, is held to the read rate, not to a copy's).
  double bandwidth_gbps() const { return read_gbps ? std::max(copy_gbps, *read_gbps) : copy_gbps; }
  std::string torch_version;
  std::string measured_at;
};

// Measures the ceilings on the CUDA device (warm-up, then the median of timed repetitions).
Calibration calibrate_device(const HostInfo& host);

}  // namespace attnbench
