// Measures one backend at one point: the passes in order, each without the instrumentation of the
// others, then the rows assembled from their results:
//   supports -> first call -> correctness -> warm-up -> timing (one pass per mode) -> CPU overhead
//   -> peak memory -> ATen op count -> GPU activity (CUPTI, attached last)
#pragma once

#include "config/settings.hpp"
#include "config/sweep.hpp"
#include "measure/device/host_info.hpp"
#include "plugins/plugin_loader.hpp"
#include "records/row.hpp"

#include <map>
#include <memory>
#include <optional>

namespace attnbench {

struct RunOptions {
  MeasureSettings measurement;
  std::map<DType, double> tolerance = default_tolerances();
  std::optional<double> peak_tflops;  // from the config or a calibration file
  uint64_t seed = 1234;
  RunInfo info;
};

class Runner {
 public:
  Runner(HostInfo host, RunOptions options);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Never throws for a problem of the backend or the shape: those become the rows' status.
  BackendRecords measure(const Point& point, const LoadedBackend& backend);

 private:
  struct Impl;
  HostInfo host_;
  RunOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnbench
