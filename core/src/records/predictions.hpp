// Predictions written in a sweep's `expect:` block: what the user guesses each backend's rows will
// show, checked against every row they apply to (records/expectations.hpp). Read here, not with
// the rest of the config: they name the report's columns, which records/ owns. The study's habit made
// part of the config: guess what the trace will show, then look.
//
//   expect:
//     naive:                           # every row of naive
//       where: {device: cuda}          # ...narrowed to some points or timing modes (optional)
//       kernels_per_call: 5            # a numeric column: a value,
//       memcpy_per_call: {min: 1, max: 1}                   # a range (either end optional),
//       cpu_us_median: {more_than: flash}                   # or a relation to another backend
//       aten_ops: [matmul, mul, masked_fill, softmax, matmul]  # the top-level ATen ops, in order
//     flash:
//       - faster_than: [math, naive]   # time_ms_median below theirs at the same point and mode
//       - where: {seq_len: [2048]}     # a list: several predictions, each with its own `where`
//         occupancy_pct: {max: 20}
#pragma once

#include "config/config.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnbench {

// One predicted fact about one column.
struct Prediction {
  std::string column;                           // a numeric column of the main CSV, or "aten_ops"
  std::optional<double> min, max;               // a value is min == max
  std::vector<std::string> less_than;           // backends this row's value must be below
  std::vector<std::string> more_than;           // ... and above (same point, mode and repetition)
  std::optional<std::vector<std::string>> ops;  // aten_ops: the names in call order
};

// Which rows an expectation applies to: each named field must take one of its values.
struct RowFilter {
  std::string field;                // an axis name, timing_mode or point_id
  std::vector<std::string> values;  // as the CSV writes them: "2048", "true", "bf16", "cuda"
};

// A place in the file that names a backend, checked against the run's backends when planned.
struct BackendReference {
  std::string backend;
  std::string key;  // "expect.flash", "expect.cudnn.cpu_us_median.more_than"
  int line = 0, column = 0;
};

struct Expectation {
  std::string backend;
  std::vector<RowFilter> where;
  std::vector<Prediction> predictions;
};

struct Expectations {
  std::vector<Expectation> items;
  std::vector<BackendReference> references;  // every backend the block names
};

// The config's `expect:` block (none: empty); a bad entry is a ConfigError located in the file.
// Backend names outside the config's `backends:` are errors here; without that list the run
// checks them against the backends found.
Expectations read_expectations(const SweepConfig& config);

}  // namespace attnbench
