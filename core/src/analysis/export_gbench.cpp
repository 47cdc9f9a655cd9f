#include "analysis/export_gbench.hpp"

#include "analysis/compare.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace attnbench {

namespace {

using nlohmann::json;

// Google Benchmark's default unit: compare.py prints times as whole numbers of it.
constexpr double kNsPerMs = 1e6;

std::string text(const CsvTable& t, size_t row, const std::string& column) {
  return t.column(column) < 0 ? std::string() : t.at(row, column);
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One benchmark name: its rows (one per repetition) and, when kept, the raw samples of them all.
struct Named {
  std::string family;
  std::vector<size_t> rows;
  const std::vector<double>* samples = nullptr;
};

json counters(const CsvTable& t, size_t r) {
  json c = json::object();
  for (const auto& [counter, column] : {std::pair{"TFLOP/s", "tflops"},
                                        {"kernels", "kernels_per_call"},
                                        {"host_us", "cpu_us_median"},
                                        {"rel_err", "rel_err"},
                                        {"p10_ms", "time_ms_p10"},
                                        {"p90_ms", "time_ms_p90"}})
    if (const auto v = t.number(r, column)) c[counter] = *v;
  return c;
}

json run_entry(const std::string& name, int family, int instance, int repetitions, int index) {
  return {{"name", name},
          {"family_index", family},
          {"per_family_instance_index", instance},
          {"run_name", name},
          {"run_type", "iteration"},
          {"repetitions", repetitions},
          {"repetition_index", index},
          {"threads", 1},
          {"time_unit", "ns"}};
}

}  // namespace

void write_gbench_json(const CsvTable& t, const SampleSets& samples, std::ostream& out) {
  check_report(t, {});  // a report of a schema this attnbench reads, with its key columns

  // Benchmarks in the report's order: a family is one (point, backend), its instances the timing
  // modes.
  std::vector<std::string> order;
  std::map<std::string, Named> named;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const std::string family = t.at(r, "point_id") + "/" + t.at(r, "backend");
    const std::string name = family + "/" + t.at(r, "timing_mode");
    auto [it, fresh] = named.try_emplace(name);
    if (fresh) order.push_back(name), it->second.family = family;
    it->second.rows.push_back(r);
  }
  std::map<std::string, int> family_index, instances;
  json benchmarks = json::array();
  for (const std::string& name : order) {
    Named& n = named[name];
    const int family = family_index.try_emplace(n.family, int(family_index.size())).first->second;
    const int instance = instances[n.family]++;
    const size_t first = n.rows.front();
    bool all_ok = true;
    std::vector<double> medians_ms, host_us;
    for (size_t r : n.rows) {
      const auto median = t.number(r, "time_ms_median");
      all_ok = all_ok && t.at(r, "status") == "ok" && median;
      if (median) medians_ms.push_back(*median);
      if (auto h = t.number(r, "cpu_us_median")) host_us.push_back(*h);
    }
    if (!all_ok) {  // Google Benchmark's failed benchmark: one entry, the first failure's reason
      size_t bad = first;
      for (size_t r : n.rows)
        if (t.at(r, "status") != "ok") bad = r;
      json b = run_entry(name, family, instance, 1, 0);
      b["error_occurred"] = true;
      b["error_message"] = t.at(bad, "status") + ": " + text(t, bad, "reason");
      b["iterations"] = 0;
      b["real_time"] = 0.0;
      b["cpu_time"] = 0.0;
      benchmarks.push_back(std::move(b));
      continue;
    }
    // cpu_time is the host time per call (measured once per row, in its own pass); where there is
    // none (it was not measured), the GPU time, as Google Benchmark's manual time does.
    const double calls = t.number(first, "calls_per_sample").value_or(1);
    const double host_ns =
        host_us.empty() ? median_of(medians_ms) * kNsPerMs : median_of(host_us) * 1e3;
    // The runs: every raw sample when the report kept them (so compare.py's U test has data),
    // else one per repetition.
    auto sample_it = samples.find(
        sample_key(t.at(first, "point_id"), t.at(first, "backend"), t.at(first, "timing_mode")));
    std::vector<double> runs_ms = sample_it != samples.end() ? sample_it->second : medians_ms;
    const json extra = counters(t, first);
    for (size_t i = 0; i < runs_ms.size(); ++i) {
      json b = run_entry(name, family, instance, int(runs_ms.size()), int(i));
      b["iterations"] = static_cast<int64_t>(calls);
      b["real_time"] = runs_ms[i] * kNsPerMs;
      b["cpu_time"] = host_ns;
      b.update(extra);
      benchmarks.push_back(std::move(b));
    }
    // Google Benchmark's aggregates of repeated runs.
    double mean = 0;
    for (double v : runs_ms) mean += v / double(runs_ms.size());
    double var = 0;
    for (double v : runs_ms) var += (v - mean) * (v - mean);
    const double sd = runs_ms.size() > 1 ? std::sqrt(var / double(runs_ms.size() - 1)) : 0;
    const std::pair<const char*, double> aggregates[] = {
        {"mean", mean}, {"median", median_of(runs_ms)}, {"stddev", sd}};
    for (const auto& [aggregate, value_ms] : aggregates) {
      json b = run_entry(name + "_" + aggregate, family, instance, int(runs_ms.size()), 0);
      b["run_name"] = name;
      b["run_type"] = "aggregate";
      b["aggregate_name"] = aggregate;
      b["aggregate_unit"] = "time";
      b.erase("repetition_index");
      b["iterations"] = static_cast<int64_t>(runs_ms.size());
      b["real_time"] = value_ms * kNsPerMs;
      b["cpu_time"] = std::string(aggregate) == "stddev" ? 0.0 : host_ns;
      benchmarks.push_back(std::move(b));
    }
  }

  // Google Benchmark's context, from what the report recorded: the machine the run was made on
  // (reports before schema 7 did not record it: empty and 0), its core's clock from the cpu pass.
  const bool any = !t.rows.empty();
  auto first_text = [&](const char* column) { return any ? text(t, 0, column) : std::string(); };
  const auto cpus = any ? t.number(0, "host_cpus") : std::nullopt;
  std::optional<double> mhz;  // the first row that measured it (refused rows did not)
  for (size_t r = 0; r < t.rows.size() && !mhz; ++r) mhz = t.number(r, "host_mhz");
  const json context = {{"date", first_text("started_at")},
                        {"host_name", first_text("host_name")},
                        {"executable", "attnbench run " + first_text("config")},
                        {"num_cpus", cpus ? static_cast<int64_t>(*cpus) : 0},
                        {"mhz_per_cpu", mhz ? static_cast<int64_t>(std::lround(*mhz)) : 0},
                        {"cpu_scaling_enabled", false},
                        {"caches", json::array()},
                        {"load_avg", json::array()},
                        {"library_build_type", "release"},
                        {"attnbench_report", t.path},
                        {"attnbench_device_name", first_text("device_name")},
                        {"attnbench_git_sha", first_text("git_sha")},
                        {"attnbench_torch_version", first_text("torch_version")},
                        {"attnbench_config_fingerprint", first_text("config_fingerprint")}};
  out << json{{"context", context}, {"benchmarks", benchmarks}}.dump(2, ' ', false,
                                                                     json::error_handler_t::replace)
      << '\n';
}

}  // namespace attnbench
