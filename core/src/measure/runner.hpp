// Measures one backend at one point: the passes in order, each without the instrumentation of the
// others, then the rows assembled from their results:
//   supports -> first call -> correctness -> warm-up -> timing (one pass per mode) -> CPU overhead
//   -> peak memory -> ATen op count -> GPU activity (CUPTI, attached last)
#pragma once

#include "config/sweep.hpp"
#include "measure/device/host_info.hpp"
#include "measure/run_options.hpp"
#include "plugins/plugin_loader.hpp"
#include "records/row.hpp"

#include <memory>

namespace attnbench {

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
