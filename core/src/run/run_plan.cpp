#include "run/run_plan.hpp"

#include "base/hash.hpp"
#include "base/lengths.hpp"
#include "kinds/problem_kind.hpp"
#include "base/names.hpp"
#include "kinds/problem.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
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

Sweep load_sweep(const std::string& path) {
  SweepConfig config = load_config(path);
  Expectations expect = read_expectations(config);
  return {std::move(config), std::move(expect)};
}

Sweep parse_sweep(const std::string& yaml_text, const std::string& file_name) {
  SweepConfig config = parse_config(yaml_text, file_name);
  Expectations expect = read_expectations(config);
  return {std::move(config), std::move(expect)};
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  Shard s;
  try {
    size_t used = 0;
    if (slash == std::string::npos) throw std::invalid_argument(text);
    s.index = std::stoi(text.substr(0, slash), &used);
    if (used != slash) throw std::invalid_argument(text);
    s.count = std::stoi(text.substr(slash + 1), &used);
    if (used != text.size() - slash - 1) throw std::invalid_argument(text);
  } catch (const std::exception&) {
    throw InputError("--shard: expected K/N (e.g. 2/4), got '" + text + "'");
  }
  if (s.count < 1 || s.index < 1 || s.index > s.count)
    throw InputError("--shard " + text + ": K must be between 1 and N");
  return s;
}

std::vector<Task> shard_tasks(const std::vector<Task>& tasks, const Shard& shard) {
  std::vector<size_t> order(tasks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return tasks[a].cost > tasks[b].cost; });
  std::vector<double> load(static_cast<size_t>(shard.count), 0.0);
  std::vector<int> part(tasks.size(), 0);
  for (size_t i : order) {
    const size_t lightest =
        static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[lightest] += tasks[i].cost;
    part[i] = static_cast<int>(lightest) + 1;
  }
  std::vector<Task> mine;
  for (size_t i = 0; i < tasks.size(); ++i)
    if (part[i] == shard.index) mine.push_back(tasks[i]);
  return mine;
}

std::string output_path(const SweepConfig& config, const RunOverrides& o) {
  if (!o.output.empty()) return o.output;
  std::string path = !config.output.empty()
                         ? config.output
                         : "results/" + std::filesystem::path(config.file).stem().string() + ".csv";
  if (!o.shard.empty()) {  // each shard its own file: results/seed.shard-2-of-4.csv
    const Shard s = parse_shard(o.shard);
    const std::filesystem::path p(path);
    path = (p.parent_path() / (p.stem().string() + ".shard-" + std::to_string(s.index) + "-of-" +
                               std::to_string(s.count) + p.extension().string()))
               .string();
  }
  return path;
}

std::string config_fingerprint(const SweepConfig& config, const std::vector<Point>& all_points) {
  std::ostringstream text;
  text.precision(17);
  text << "v2";  // v1 listed the measurement keys by hand; v2 takes them from the table
  const MeasureSettings defaults;
  for (const SettingField& s : measure_settings_fields()) {
    const std::string value = field_text(s.field.get(config.measurement));
    if (s.fingerprinted &&
        (s.fingerprinted_at_default || value != field_text(s.field.get(defaults))))
      text << '|' << s.field.name << ' ' << value;
  }
  text << "|tolerance";
  for (const auto& [dtype, limit] : config.tolerance)
    text << ' ' << to_string(dtype) << '=' << limit;
  text << "|seed " << config.seed << "|peak " << (config.peak_tflops ? *config.peak_tflops : 0);
  if (config.peak_tflops_fp8) text << "|peak fp8 " << *config.peak_tflops_fp8;  // new: old stay
  text << "|points";
  // Each length spec's histogram buckets, read once (the points of a sweep share their specs).
  const std::string dir = std::filesystem::path(config.file).parent_path().string();
  std::map<std::string, std::string> histograms;  // spec as written -> its buckets
  auto buckets_of = [&](const std::string& written) -> const std::string& {
    auto [it, fresh] = histograms.emplace(written, "");
    if (fresh) {
      try {
        it->second = histogram_contents(parse_length_spec(written), dir);
      } catch (const std::invalid_argument&) {
        it->second = "unreadable";  // read when the sweep was expanded; gone since
      }
    }
    return it->second;
  };
  for (const auto& p : all_points) {
    text << ' ' << p.id;
    // The lengths drawn, not only their spec: a histogram file edited under the same name draws
    // other lengths at the same id, and a report must not hold rows of both.
    if (p.problem.ragged()) {
      std::ostringstream lens;
      for (int64_t n : p.problem.q_lens) lens << n << ',';
      lens << ';';
      for (int64_t n : p.problem.kv_lens) lens << n << ',';
      // And a histogram's buckets: an edit that happens to draw the same lengths at this seed
      // (a bucket of tiny weight added, say) is still another sweep.
      for (const std::string& written : {p.problem.seq_lens, p.problem.seq_lens_kv})
        if (!written.empty()) lens << '|' << buckets_of(written);
      text << '[' << fnv1a_hex(lens.str()) << ']';
    }
  }
  return fnv1a_hex(text.str());
}

RunPlan plan_run(Sweep sweep, const RunOverrides& o, const std::vector<std::string>& available,
                 bool cuda_available) {
  SweepConfig& config = sweep.config;
  const bool backends_from_file = o.backends.empty();
  if (!o.backends.empty()) {  // the config's entry of each name, else a plugin of that name
    std::vector<BackendSpec> chosen;
    for (const std::string& name : o.backends) {
      if (std::count(o.backends.begin(), o.backends.end(), name) > 1)  // each row would be doubled
        throw InputError("--backends: '" + name + "' is named twice");
      auto it = std::find_if(config.backends.begin(), config.backends.end(),
                             [&](const BackendSpec& b) { return b.name == name; });
      chosen.push_back(it != config.backends.end() ? *it : plugin_kind().parse(name, ""));
    }
    config.backends = std::move(chosen);
  }
  if (!o.passes.empty()) config.measurement.passes = overridden(o.passes, "--passes", parse_passes);
  if (!o.timing_modes.empty())
    config.measurement.timing_modes =
        overridden(o.timing_modes, "--timing-modes", parse_timing_modes);

  if (o.tp < 0 || o.tp > 4096) throw InputError("--tp: a tensor-parallel degree is 1 to 4096");
  if (o.tp > 0)
    for (SweepBlock& block : config.sweeps) block.tp = {o.tp}, block.tp_key = "--tp";
  if (o.timeout_s > 0) config.measurement.timeout_s = o.timeout_s;
  if (o.repetitions > 0) config.measurement.repetitions = o.repetitions;
  if (!o.power.empty()) {
    const auto power = parse_enum<PowerMode>(o.power);
    if (!power)
      throw InputError("--power: '" + o.power + "' is not one of " +
                       one_of(enum_names<PowerMode>()));
    config.measurement.power = *power;
  }

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

  plan.backends = config.backends.empty() ? available : config.backend_names();
  for (const BackendSpec& b : config.backends) {
    if (std::find(available.begin(), available.end(), b.name) != available.end()) continue;
    const std::string msg =
        "no plugin provides backend '" + b.name + "' (found: " + joined(available) + ")";
    if (!backends_from_file) throw InputError("--backends: " + msg);
    throw ConfigError(config.file, b.line, b.column, "backends", msg);
  }
  if (plan.backends.empty()) throw InputError("no backend plugins found");
  double total_flop = 0;
  for (const Point& p : plan.points) total_flop += point_flop(p.problem);
  const double fixed =
      plan.points.empty() ? 0 : total_flop / static_cast<double>(plan.points.size());
  for (size_t i = 0; i < plan.points.size(); ++i)
    for (const auto& b : plan.backends)
      plan.tasks.push_back({i, b, point_flop(plan.points[i].problem) + fixed});
  if (!o.shard.empty()) {
    plan.shard = parse_shard(o.shard);
    // More parts than measurements would leave parts empty (and make the split's bookkeeping as
    // large as N): refused.
    if (static_cast<size_t>(plan.shard->count) > plan.tasks.size())
      throw InputError("--shard " + o.shard + ": the sweep has " +
                       std::to_string(plan.tasks.size()) +
                       " (point, backend)s, so N can be at most that");
    plan.tasks = shard_tasks(plan.tasks, *plan.shard);
  }
  // Names in `expect:` were checked against the file's backends; without a list, against the
  // plugins found.
  for (const BackendReference& ref : sweep.expect.references)
    if (std::find(available.begin(), available.end(), ref.backend) == available.end() &&
        std::find_if(config.backends.begin(), config.backends.end(), [&](const BackendSpec& b) {
          return b.name == ref.backend;
        }) == config.backends.end())
      throw ConfigError(
          config.file, ref.line, ref.column, ref.key,
          "no plugin provides backend '" + ref.backend + "' (found: " + joined(available) + ")");
  plan.config = std::move(config);
  plan.expect = std::move(sweep.expect);
  return plan;
}

}  // namespace attnbench
