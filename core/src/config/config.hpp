// A sweep as written in YAML, validated. Parsing is strict: every problem is reported with the
// file, line, column and key (ConfigError), and nothing is run or written before the whole file is
// good.
#pragma once

#include "base/field.hpp"
#include "config/settings.hpp"
#include "plugins/backend_kind.hpp"

#include <attnbench/backend.hpp>

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace attnbench {

// One value of an axis, typed by its problem field (kinds/problem.hpp): an integer, a bool, or a
// name (device "auto" becomes cuda when a CUDA device is present).
using AxisValue = FieldValue;

struct Axis {
  std::string name;  // a problem field's
  std::vector<AxisValue> values;
  std::string key;  // where it was written, for messages: "sweep.kv_heads", "sweep.zip[0].heads"
  int line = 0, column = 0;
};

// Axes whose values move together: the i-th values of every axis form one choice.
struct ZipGroup {
  std::vector<Axis> axes;
  int line = 0;  // for messages
};

// One `sweep:` block: its points are the product of its axes and zip groups.
struct SweepBlock {
  std::vector<Axis> axes;  // free axes, cartesian product, in file order
  std::vector<ZipGroup> zips;
  size_t zips_at = 0;  // the zip groups stand before axes[zips_at] (where `zip:` was written)
  // Tensor-parallel degrees (`tp:` or run --tp): each point once per degree, its heads divided as
  // served (query heads by tp; kv heads by tp, or one a GPU when fewer than tp are replicated).
  std::vector<int64_t> tp{1};
  std::string tp_key = "sweep.tp";
  int tp_line = 1, tp_column = 1;
};

struct SweepConfig {
  std::string file;
  std::string name;
  std::string description;
  std::string output;  // CSV path; relative paths are relative to the working directory
  // Every backend the sweep names, of every kind, in order (located); empty: every plugin found.
  std::vector<BackendSpec> backends;
  MeasureSettings measurement;
  // `sweep:` is one block or a list of them (prefill, decode and FP8 shapes in one report):
  // the points of each block in turn, a point named twice measured once.
  std::vector<SweepBlock> sweeps;
  std::map<DType, double> tolerance;  // max relative error per row against the float64 reference
  std::optional<double> peak_tflops;  // overrides the calibration file
  std::optional<double> peak_tflops_fp8;  // fp8_e4m3 rows' peak, likewise
  uint64_t seed = 1234;
  // `expect:` as written: predictions name the report's columns, so records/predictions.hpp reads
  // them (read_expectations). Not part of the fingerprint.
  std::optional<YAML::Node> expect;
  // `layers:` as written: how many layers of each problem kind the whole model has, in file order
  // (`{attention: 15, gdn: 45}`), each kind one the sweep measures. What the rows are summed by
  // per model (tools/layer_mix.py reads it from the file a report's `config` column names); it
  // changes no measurement, so it is no part of the fingerprint.
  std::vector<std::pair<std::string, int64_t>> layers;

  std::vector<std::string> backend_names() const;
};

// Parses and validates `path`; throws ConfigError (or InputError when the file cannot be read).
SweepConfig load_config(const std::string& path);
SweepConfig parse_config(const std::string& yaml_text, const std::string& file_name);

// The top-level keys a sweep config may have (docs/config.md documents each; a test checks).
const std::vector<std::string>& config_keys();

}  // namespace attnbench
