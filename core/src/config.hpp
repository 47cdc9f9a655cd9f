// A sweep as written in YAML, validated. Parsing is strict: every problem is reported with the
// file, line, column and key (ConfigError), and nothing is run or written before the whole file is good.
#pragma once

#include "errors.hpp"

#include <attnbench/plugin.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace attnbench {

// How a CUDA sample is timed; CPU points are always timed by the wall clock ("wall").
enum class TimingMode { cold, batch, graph, wall };
std::string to_string(TimingMode mode);
std::optional<TimingMode> parse_timing_mode(const std::string& text);

enum class Pass { correctness, timing, cpu, memory, ops, kernels };
std::string to_string(Pass pass);
std::optional<Pass> parse_pass(const std::string& text);
std::vector<Pass> all_passes();

struct MeasureSettings {
  double warmup_ms = 50;         // warm-up calls for at least this long (and at least 2 calls)
  int min_samples = 10;
  int max_samples = 10000;
  double min_time_s = 0.05;      // keep sampling at least this long
  double max_time_s = 1.0;       // stop here even if the noise target was not met
  double target_rel_noise = 0.01;
  std::vector<TimingMode> timing_modes{TimingMode::cold};  // for CUDA points
  double batch_sample_ms = 2.0;  // `batch`/`graph`: calls per sample chosen to fill this long
  int kernel_pass_iterations = 3;
  int cpu_pass_calls = 200;
  bool keep_samples = false;     // write raw samples to <output>.samples.csv
  std::vector<Pass> passes = all_passes();
};

// Device choice in the sweep: "auto" becomes cuda when a CUDA device is present.
using AxisValue = std::variant<int64_t, bool, std::string>;

enum class AxisName { batch, heads, seq_len, head_dim, dtype, causal, device };
std::string to_string(AxisName axis);

struct Axis {
  AxisName name;
  std::vector<AxisValue> values;
};

// Axes whose values move together: the i-th values of every axis form one choice.
struct ZipGroup {
  std::vector<Axis> axes;
  int line = 0;  // for messages
};

struct SweepConfig {
  std::string file;
  std::string name;
  std::string description;
  std::string output;                 // CSV path; relative paths are relative to the working directory
  std::vector<std::string> backends;  // empty: every backend found
  std::vector<std::pair<int, int>> backend_marks;  // line, column of each name, for messages
  MeasureSettings measurement;
  std::vector<Axis> axes;             // free axes, cartesian product, in file order
  std::vector<ZipGroup> zips;
  size_t zips_at = 0;                 // the zip groups stand before axes[zips_at] (where `zip:` was written)
  std::map<DType, double> tolerance;  // max relative error per row against the float64 reference
  std::optional<double> peak_tflops;  // overrides the calibration file
  uint64_t seed = 1234;
};

// A list item that is not allowed; `index` says which, so the caller can locate it.
class ListItemError : public InputError {
 public:
  ListItemError(size_t index, const std::string& message) : InputError(message), index_(index) {}
  size_t index() const { return index_; }

 private:
  size_t index_;
};

// The checks of `measurement.timing_modes` and `measurement.passes`, shared by the YAML reader and
// the command-line overrides: known names, no repeats; throw ListItemError.
std::vector<TimingMode> parse_timing_modes(const std::vector<std::string>& names);
std::vector<Pass> parse_passes(const std::vector<std::string>& names);

// Parses and validates `path`; throws ConfigError (or InputError when the file cannot be read).
SweepConfig load_config(const std::string& path);
SweepConfig parse_config(const std::string& yaml_text, const std::string& file_name);

std::map<DType, double> default_tolerances();

}  // namespace attnbench
