#include "cli/run_plan.hpp"

#include "base/hash.hpp"
#include "base/names.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

namespace attnbench {

namespace {

template <class Parse>
auto overridden(const std::vector<std::string>& names, const char* flag, Parse parse) {
  try {
    return parse(names);
  } catch (const ListItemError& e) {
    throw InputError(std::string(flag) + ": " + e.what());
  }
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

std::string output_path(const SweepConfig& config, const RunOverrides& o) {
  if (!o.output.empty()) return o.output;
  if (!config.output.empty()) return config.output;
  return "results/" + std::filesystem::path(config.file).stem().string() + ".csv";
}

std::string config_fingerprint(const SweepConfig& config, const std::vector<Point>& all_points) {
  const MeasureSettings& m = config.measurement;
  std::ostringstream text;
  text.precision(17);
  text << "v1|warmup " << m.warmup_ms << "|samples " << m.min_samples << ' ' << m.max_samples
       << "|time " << m.min_time_s << ' ' << m.max_time_s << "|noise " << m.target_rel_noise
       << "|batch " << m.batch_sample_ms << "|kernels " << m.kernel_pass_iterations << "|cpu "
       << m.cpu_pass_calls << "|modes";
  for (auto mode : m.timing_modes) text << ' ' << to_string(mode);
  text << "|passes";
  for (auto pass : m.passes) text << ' ' << to_string(pass);
  text << "|tolerance";
  for (const auto& [dtype, limit] : config.tolerance)
    text << ' ' << to_string(dtype) << '=' << limit;
  text << "|seed " << config.seed << "|peak " << (config.peak_tflops ? *config.peak_tflops : 0)
       << "|points";
  for (const auto& p : all_points) text << ' ' << p.id;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(text.str())));
  return hex;
}

RunPlan plan_run(SweepConfig config, const RunOverrides& o,
                 const std::vector<std::string>& available, bool cuda_available) {
  const bool backends_from_file = o.backends.empty();
  if (!o.backends.empty()) config.backends = o.backends;
  if (!o.passes.empty()) config.measurement.passes = overridden(o.passes, "--passes", parse_passes);
  if (!o.timing_modes.empty())
    config.measurement.timing_modes =
        overridden(o.timing_modes, "--timing-modes", parse_timing_modes);

  if (o.timeout_s > 0) config.measurement.timeout_s = o.timeout_s;
  if (o.repetitions > 0) config.measurement.repetitions = o.repetitions;

  RunPlan plan;
  plan.output = output_path(config, o);
  plan.points = expand_sweep(config, cuda_available);
  plan.fingerprint = config_fingerprint(config, plan.points);
  if (!o.points.empty()) {
    std::vector<Point> chosen;
    for (const auto& id : o.points) {
      auto it = std::find_if(plan.points.begin(), plan.points.end(),
                             [&](const Point& p) { return p.id == id; });
      if (it == plan.points.end())
        throw InputError("--points: the sweep has no point '" + id + "' (see --dry-run)");
      chosen.push_back(*it);
    }
    plan.points = std::move(chosen);
  }

  plan.backends = config.backends.empty() ? available : config.backends;
  for (size_t i = 0; i < config.backends.size(); ++i) {
    if (std::find(available.begin(), available.end(), config.backends[i]) != available.end())
      continue;
    const std::string msg = "no plugin provides backend '" + config.backends[i] +
                            "' (found: " + joined(available) + ")";
    if (!backends_from_file) throw InputError("--backends: " + msg);
    const auto [line, column] = config.backend_marks.at(i);
    throw ConfigError(config.file, line, column, "backends", msg);
  }
  if (plan.backends.empty()) throw InputError("no backend plugins found");
  // Names in `expect:` were checked against the file's backends; without a list, against the
  // plugins found.
  for (const BackendReference& ref : config.expect.references)
    if (std::find(available.begin(), available.end(), ref.backend) == available.end() &&
        std::find(config.backends.begin(), config.backends.end(), ref.backend) ==
            config.backends.end())
      throw ConfigError(config.file, ref.line, ref.column, ref.key,
                        "no plugin provides backend '" + ref.backend + "' (found: " +
                            joined(available) + ")");
  plan.config = std::move(config);
  return plan;
}

}  // namespace attnbench
