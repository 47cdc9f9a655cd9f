// What `attnbench run` will do, decided before anything is measured or written: the config with the
// command line's overrides applied (checked like the YAML), the points, the backends, the output.
// Pure: no plugin is loaded and no file is touched, so every rule is tested in core_tests.
#pragma once

#include "config/config.hpp"
#include "config/sweep.hpp"

#include <string>
#include <vector>

namespace attnbench {

// The command line's say over a config; empty means "as the config says".
struct RunOverrides {
  std::string output;
  std::vector<std::string> backends, passes, timing_modes, points;
  double timeout_s = 0;  // 0: the config's measurement.timeout_s
  int repetitions = 0;   // 0: the config's measurement.repetitions
};

struct RunPlan {
  SweepConfig config;                 // overrides applied
  std::string output;                 // main CSV path
  std::vector<Point> points;          // in sweep order, or in --points order
  std::vector<std::string> backends;  // in config order, or every available one
  std::string fingerprint;            // what is measured and how: config_fingerprint in every row
};

// The main CSV: --output, else the config's output, else results/<config name>.csv.
std::string output_path(const SweepConfig& config, const RunOverrides& overrides);

// Hex digest of what decides the numbers: the sweep's points (all of them, whatever --points
// picks), the measurement settings (not keep_samples, timeout_s or repetitions: more repetitions
// resume the same sweep), tolerances, seed and peak.
// Backends are left out: each (point, backend) stands on its own.
std::string config_fingerprint(const SweepConfig& config, const std::vector<Point>& all_points);

// Throws InputError (ConfigError when a backend named in the file is missing, located at its name)
// for an unknown pass, timing mode, point or backend. `available`: backend names the plugins
// provide.
RunPlan plan_run(SweepConfig config, const RunOverrides& overrides,
                 const std::vector<std::string>& available, bool cuda_available);

}  // namespace attnbench
