// Measures one backend at one point, pass by pass:
//   set-up + first call -> correctness -> warm-up -> timing (one pass per timing mode)
//   -> CPU overhead -> peak memory -> ATen op count -> GPU activity (CUPTI, attached last)
// Each pass runs without the instrumentation of the others. The result is typed rows that the
// writers only read.
#pragma once

#include "config.hpp"
#include "host_info.hpp"
#include "plugin_loader.hpp"
#include "row.hpp"
#include "sweep.hpp"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnbench {

struct RunOptions {
  MeasureSettings measurement;
  std::map<DType, double> tolerance = default_tolerances();
  std::optional<double> peak_tflops;  // from the config or a calibration file
  uint64_t seed = 1234;
  RunInfo info;
};

struct BackendResult {
  std::vector<Row> rows;  // one per timing mode
  std::vector<KernelRow> kernels;
  struct Samples {
    std::string timing_mode;
    std::vector<double> time_ms;
  };
  std::vector<Samples> samples;  // raw timing samples, when keep_samples
  std::string notes;             // for the log: e.g. how the kernel set differed between calls
};

class Runner {
 public:
  Runner(HostInfo host, RunOptions options);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Never throws for a problem of the backend or the shape: those become the rows' status.
  BackendResult measure(const Point& point, const LoadedBackend& backend);

  const HostInfo& host() const { return host_; }

 private:
  struct Impl;
  HostInfo host_;
  RunOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnbench
