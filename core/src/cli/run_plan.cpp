#include "cli/run_plan.hpp"

#include <algorithm>
#include <filesystem>

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

RunPlan plan_run(SweepConfig config, const RunOverrides& o,
                 const std::vector<std::string>& available, bool cuda_available) {
  const bool backends_from_file = o.backends.empty();
  if (!o.backends.empty()) config.backends = o.backends;
  if (!o.passes.empty()) config.measurement.passes = overridden(o.passes, "--passes", parse_passes);
  if (!o.timing_modes.empty())
    config.measurement.timing_modes =
        overridden(o.timing_modes, "--timing-modes", parse_timing_modes);

  RunPlan plan;
  plan.output = !o.output.empty() ? o.output
                : !config.output.empty()
                    ? config.output
                    : "results/" + std::filesystem::path(config.file).stem().string() + ".csv";
  plan.points = expand_sweep(config, cuda_available);
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
  plan.config = std::move(config);
  return plan;
}

}  // namespace attnbench
