#include "config/settings.hpp"

#include "base/names.hpp"
#include "config/measurement_section.hpp"

#include <algorithm>

namespace attnbench {

std::vector<Pass> all_passes() {
  std::vector<Pass> out;
  for (const auto& n : name_table<Pass>()) out.push_back(n.value);
  return out;
}

bool MeasureSettings::wants(Pass pass) const {
  return std::find(passes.begin(), passes.end(), pass) != passes.end();
}

namespace {

// A deadline past a week is a typo (and past ~1e11 s its clock arithmetic overflows).
Field<MeasureSettings> at_most_a_week(Field<MeasureSettings> f) {
  f.set = [set = std::move(f.set), name = f.name](MeasureSettings& m, const FieldValue& v) {
    if (const double* s = std::get_if<double>(&v); s && *s > kMaxTimeoutS)
      throw std::invalid_argument(name + " is at most " + std::to_string(int(kMaxTimeoutS)) +
                                  " s (a week), not " + field_text(v));
    set(m, v);
  };
  return f;
}

}  // namespace

const std::vector<SettingField>& measure_settings_fields() {
  using M = MeasureSettings;
  static const std::vector<SettingField> fields = {
      {field("warmup_ms", &M::warmup_ms, "ms",
             "warm-up calls for at least this long (and at least 2 calls)"),
       0},
      {field("min_samples", &M::min_samples, "count", "timing samples at least"), 1},
      {field("max_samples", &M::max_samples, "count", "timing samples at most"), 1},
      {field("min_time_s", &M::min_time_s, "s", "keep sampling at least this long"), 0},
      {at_most_a_week(field("max_time_s", &M::max_time_s, "s",
                            "stop here even if the noise target was not met")),
       0, true},
      {field("target_rel_noise", &M::target_rel_noise, "ratio",
             "stop sampling once time_rel_noise is this low"),
       0, true},
      {field("timing_modes", &M::timing_modes, "",
             "CUDA timing modes: `cold`, `batch`, `graph` (CPU points are always `wall`)")},
      {field("batch_sample_ms", &M::batch_sample_ms, "ms",
             "`batch`/`graph`: calls per sample chosen to fill this long"),
       0, true},
      {field("kernel_pass_iterations", &M::kernel_pass_iterations, "count",
             "calls under CUPTI in the kernels pass (and the trace pass)"),
       1},
      {field("cpu_pass_calls", &M::cpu_pass_calls, "count",
             "calls timed one by one in the cpu pass (host time per call)"),
       1},
      {field("keep_samples", &M::keep_samples, "",
             "write the raw samples to <output>.samples.csv (compare judges on them)"),
       0, false, true, false},
      {at_most_a_week(field("timeout_s", &M::timeout_s, "s",
                            "a worker not done with one (point, backend) by then is killed: "
                            "`timeout`")),
       0, true, true, false},
      {field("passes", &M::passes, "",
             "which passes run: correctness, timing, cpu, memory, ops, kernels, energy")},
      {field("energy_min_call_ms", &M::energy_min_call_ms, "ms",
             "the energy pass runs where a call takes at least this long (its window is 0.3 s "
             "at least, 0.4-0.5 s of harness time a (point, backend) however short the call); 0: "
             "at every point"),
       0, false, true, true, false},
      {field("power", &M::power, "",
             "`sustained`: samples back to back; `burst`: a sample taken below the SM clock's "
             "maximum is dropped and the GPU rests before the next (power_mode)"),
       0, false, true, true, false},
      {field("cooldown_max_s", &M::cooldown_max_s, "s",
             "power burst: rest at most this long per timing pass, then keep the samples at the "
             "clock there is (flag clock_not_recovered)"),
       0, false, true, true, false},
      {field("repetitions", &M::repetitions, "count",
             "the sweep run through this many times, so drift hits every backend alike"),
       1, false, true, false},
      {field("trace", &M::trace, "", "a trace pass last (run --trace)"), 0, false, false, false},
  };
  return fields;
}

std::map<DType, double> default_tolerances() {
  // Per-row relative error against float64. bf16 keeps 8 mantissa bits, so rounding the output
  // alone costs ~4e-3; fp16 keeps 11; fp32 matmuls run without TF32 in PyTorch's default.
  // fp8_e4m3 keeps 4: the reference is computed from the quantized inputs, so what is left is
  // the kernels' own fp8 rounding of the softmax probabilities (and of the output, for cuDNN). On
  // the H200 (configs/hopper.yaml): fa3 0.035-0.045, cudnn-fe 0.047-0.058 at head_dim 64 and 128.
  return {{DType::bf16, 2e-2}, {DType::f16, 5e-3}, {DType::f32, 1e-4}, {DType::fp8_e4m3, 8e-2}};
}

namespace {

// Names from E's table, each known and none twice; `allowed` says which values a list may hold.
template <class E>
std::vector<E> parse_list(const std::vector<std::string>& names, const char* what,
                          const std::vector<E>& allowed, const std::string& note) {
  std::vector<std::string> allowed_names;
  for (E e : allowed) allowed_names.push_back(to_string(e));
  std::vector<E> out;
  for (size_t i = 0; i < names.size(); ++i) {
    const auto value = parse_enum<E>(names[i]);
    if (!value || std::find(allowed.begin(), allowed.end(), *value) == allowed.end())
      throw ListItemError(i, std::string("unknown ") + what + " '" + names[i] + "'; use " +
                                 one_of(allowed_names) + note);
    if (std::find(out.begin(), out.end(), *value) != out.end())
      throw ListItemError(i, std::string(what) + " '" + names[i] + "' appears twice");
    out.push_back(*value);
  }
  return out;
}

}  // namespace

// How CPU points are timed (they have no CUDA events); a config names the other modes.
constexpr TimingMode kCpuTimingMode = TimingMode::wall;

std::vector<TimingMode> parse_timing_modes(const std::vector<std::string>& names) {
  // Every mode of the name table but the CPU's own: a mode added there is allowed here.
  std::vector<TimingMode> cuda_modes;
  for (const auto& n : name_table<TimingMode>())
    if (!n.alias && n.value != kCpuTimingMode) cuda_modes.push_back(n.value);
  return parse_list<TimingMode>(
      names, "timing mode", cuda_modes,
      " (CPU points are always timed as " + to_string(kCpuTimingMode) + ")");
}

std::vector<Pass> parse_passes(const std::vector<std::string>& names) {
  return parse_list<Pass>(names, "pass", all_passes(), "");
}

}  // namespace attnbench
