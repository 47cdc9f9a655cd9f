// What every (point, backend) of a run is measured with and its rows are judged by; LibTorch-free,
// so a worker can receive it.
#pragma once

#include "config/settings.hpp"
#include "records/row.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace attnbench {

struct RunOptions {
  MeasureSettings measurement;
  std::map<DType, double> tolerance = default_tolerances();
  std::optional<double> peak_tflops;      // from the config or a calibration file
  std::optional<double> peak_tflops_fp8;  // fp8 rows' peak, likewise
  std::optional<double> bandwidth_gbps;   // the device's memory bandwidth, from the calibration
  uint64_t seed = 1234;
  RunInfo info;
  // Told the name of each pass as it starts (a worker reports it, so a crash names its pass).
  std::function<void(const std::string& pass)> on_pass;
};

}  // namespace attnbench
