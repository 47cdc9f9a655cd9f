// What `attnbench run` will do, decided before anything is measured or written: the config with the
// command line's overrides applied (checked like the YAML), the points, the backends, the output.
// Pure: no plugin is loaded and no file is touched, so every rule is tested in core_tests.
#pragma once

#include "config/config.hpp"
#include "config/sweep.hpp"
#include "records/predictions.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnbench {

// The command line's say over a config; empty means "as the config says".
struct RunOverrides {
  std::string output;
  std::vector<std::string> backends, passes, timing_modes, points;
  double timeout_s = 0;  // 0: the config's measurement.timeout_s
  int repetitions = 0;   // 0: the config's measurement.repetitions
  std::string power;     // --power sustained|burst; empty: the config's measurement.power
  std::string shard;     // --shard K/N: run part K of N; empty: all of it
  int tp = 0;            // --tp N: every block at tensor-parallel degree N; 0: the config's
};

// One measurement a run makes (in every repetition): a point of the plan and a backend.
struct Task {
  size_t point = 0;  // index into RunPlan::points
  std::string backend;
  double cost = 0;  // estimated, for --shard: FLOPs plus the sweep's mean (the fixed part)
};

// --shard K/N, parsed: 1 <= index <= count.
struct Shard {
  int index = 1, count = 1;
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};

// A sweep file read whole, before anything runs: the config and its predictions (which name the
// report's columns, so records/ reads them). Throws ConfigError, located, for either.
struct Sweep {
  SweepConfig config;
  Expectations expect;
};
Sweep load_sweep(const std::string& path);
Sweep parse_sweep(const std::string& yaml_text, const std::string& file_name);

struct RunPlan {
  SweepConfig config;                 // overrides applied
  Expectations expect;                // the config's predictions
  std::string output;                 // main CSV path
  std::vector<Point> points;          // in sweep order, or in --points order
  std::vector<std::string> backends;  // in config order, or every available one
  std::string fingerprint;            // what is measured and how: config_fingerprint in every row
  std::vector<Task> tasks;            // point by point, backends in order; only this shard's
  std::optional<Shard> shard;
};

// "K/N" -> Shard; throws InputError for anything else (K outside 1..N, N < 1).
Shard parse_shard(const std::string& text);

// Splits `tasks` into `count` parts of nearly equal estimated cost, the same way every time
// (largest first, each to the part with the least so far; ties by plan order and part number), and
// returns part `index` (1-based) in plan order. The parts are disjoint and together are `tasks`.
std::vector<Task> shard_tasks(const std::vector<Task>& tasks, const Shard& shard);

// The main CSV: --output, else the config's output, else results/<config name>.csv; with --shard
// K/N and no --output, <stem>.shard-K-of-N.csv.
std::string output_path(const SweepConfig& config, const RunOverrides& overrides);

// Hex digest of what decides the numbers: the sweep's points (all of them, whatever --points
// picks), the measurement settings (not keep_samples, timeout_s or repetitions: more repetitions
// resume the same sweep), tolerances, seed and peak.
// Backends are left out: each (point, backend) stands on its own.
std::string config_fingerprint(const SweepConfig& config, const std::vector<Point>& all_points);

// Throws InputError (ConfigError when a backend named in the file is missing, located at its name)
// for an unknown pass, timing mode, point or backend. `available`: backend names the plugins
// provide.
RunPlan plan_run(Sweep sweep, const RunOverrides& overrides,
                 const std::vector<std::string>& available, bool cuda_available);

}  // namespace attnbench
