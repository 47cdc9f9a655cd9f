// Measures one backend at one point: the passes in order, each without the instrumentation of the
// others, each result typed (pass_results.hpp); records/assemble.hpp makes the rows of them.
//   supports -> first call -> correctness -> warm-up -> timing (one pass per mode) -> CPU overhead
//   -> peak memory -> ATen op count -> GPU activity (CUPTI, attached last)
#pragma once

#include "config/sweep.hpp"
#include "measure/device/host_info.hpp"
#include "measure/pass_results.hpp"
#include "plugins/plugin_loader.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace attnbench {

struct RunnerOptions {
  MeasureSettings measurement;
  uint64_t seed = 1234;  // with the point and the backend, it seeds each (point, backend)'s inputs
  // Told the name of each pass as it starts (a worker reports it, so a crash names its pass).
  std::function<void(const std::string& pass)> on_pass;
};

class Runner {
 public:
  Runner(HostInfo host, RunnerOptions options);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Never throws for a problem of the backend or the shape: those are failures in the results.
  PassResults measure(const Point& point, const LoadedBackend& backend);

 private:
  struct Impl;
  HostInfo host_;
  RunnerOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attnbench
