// How each (point, backend) is measured: the `measurement:` section of a sweep, and the checks its
// list-valued settings share with the command-line overrides.
#pragma once

#include "base/enums.hpp"
#include "base/errors.hpp"
#include "base/field.hpp"
#include "base/stats.hpp"

#include <attnbench/backend.hpp>

#include <map>
#include <string>
#include <vector>

namespace attnbench {

std::vector<Pass> all_passes();

struct MeasureSettings {
  double warmup_ms = 50;  // warm-up calls for at least this long (and at least 2 calls)
  int min_samples = 10;
  int max_samples = 10000;
  double min_time_s = 0.05;  // keep sampling at least this long
  double max_time_s = 1.0;   // stop here even if the noise target was not met
  double target_rel_noise = 0.01;
  std::vector<TimingMode> timing_modes{TimingMode::cold};  // for CUDA points
  double batch_sample_ms = 2.0;  // `batch`/`graph`: calls per sample chosen to fill this long
  int kernel_pass_iterations = 3;
  int cpu_pass_calls = 200;
  bool keep_samples = true;  // write raw samples to <output>.samples.csv (compare judges on them)
  double timeout_s = 600;    // a worker not done with one (point, backend) by then is killed
  // Each (point, backend) measured this many times, the sweep run through once per repetition, so
  // that drift (clocks, a busy host) hits every backend alike; compare uses the spread between
  // them.
  int repetitions = 1;
  PowerMode power = PowerMode::sustained;
  double cooldown_max_s = 30;  // burst: rest at most this long per timing pass, then give up
  std::vector<Pass> passes = all_passes();
  // The energy pass runs where a call takes at least this long (its warm-up median): its window
  // is 0.3 s at least, 0.4-0.5 s of harness time a (point, backend) however short the call; 0
  // measures every point's energy.
  double energy_min_call_ms = 10;
  bool trace = false;  // run --trace: a trace pass last; not in the fingerprint (changes no number)

  bool wants(Pass pass) const;
  SamplingRule sampling() const {
    return {min_samples, max_samples, min_time_s, max_time_s, target_rel_noise};
  }
};

// Whether the energy pass runs at a point whose call takes `est_call_ms` (its warm-up median): from
// energy_min_call_ms, the bound included.
inline bool energy_pays(const MeasureSettings& m, double est_call_ms) {
  return est_call_ms >= m.energy_min_call_ms;
}

// The `measurement:` keys, one entry each (the YAML reader, the worker protocol, the config
// fingerprint and docs/columns.md read this table): the field, its lower bound, whether a sweep
// may set it (`trace` is run --trace only), and whether it decides the numbers (a key that does
// not, like timeout_s, may change between a run and its --resume).
struct SettingField {
  Field<MeasureSettings> field;
  double min = 0;
  bool min_exclusive = false;
  bool config_key = true;
  bool fingerprinted = true;
  // Keys added after reports were written: fingerprinted only when set to other than their
  // default, so that an older report's fingerprint (its --resume, its shards' merge) still holds.
  bool fingerprinted_at_default = true;
};
const std::vector<SettingField>& measure_settings_fields();

// Max per-row relative error against float64, per dtype.
std::map<DType, double> default_tolerances();

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

}  // namespace attnbench
