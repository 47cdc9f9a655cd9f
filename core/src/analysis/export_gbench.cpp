#include "analysis/export_gbench.hpp"

#include "analysis/compare.hpp"
#include "write/schema.hpp"

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

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One benchmark name: its rows (one per repetition) and, when kept, the raw samples of them all.
struct Named {
  std::string family;
  std::vector<const Row*> rows;
};

json counters(const Row& row) {
  json c = json::object();
  for (const auto& [counter, value] : {std::pair{"TFLOP/s", &row.tflops},
                                       {"kernels", &row.kernels_per_call},
                                       {"host_us", &row.cpu_us_median},
                                       {"rel_err", &row.rel_err},
                                       {"p10_ms", &row.time_ms_p10},
                                       {"p90_ms", &row.time_ms_p90}})
    if (*value) c[counter] = **value;
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
  const std::vector<Row> rows = typed_rows(t);

  // Benchmarks in the report's order: a family is one (point, backend), its instances the timing
  // modes.
  std::vector<std::string> order;
  std::map<std::string, Named> named;
  for (const Row& row : rows) {
    const std::string family = row.point_id + "/" + row.backend;
    const std::string name = family + "/" + to_string(row.timing_mode);
    auto [it, fresh] = named.try_emplace(name);
    if (fresh) order.push_back(name), it->second.family = family;
    it->second.rows.push_back(&row);
  }
  std::map<std::string, int> family_index, instances;
  json benchmarks = json::array();
  for (const std::string& name : order) {
    Named& n = named[name];
    const int family = family_index.try_emplace(n.family, int(family_index.size())).first->second;
    const int instance = instances[n.family]++;
    const Row& first = *n.rows.front();
    bool all_ok = true;
    std::vector<double> medians_ms, host_us;
    for (const Row* r : n.rows) {
      all_ok = all_ok && r->status == Status::ok && r->time_ms_median;
      if (r->time_ms_median) medians_ms.push_back(*r->time_ms_median);
      if (r->cpu_us_median) host_us.push_back(*r->cpu_us_median);
    }
    if (!all_ok) {  // Google Benchmark's failed benchmark: one entry, the first failure's reason
      const Row* bad = &first;
      for (const Row* r : n.rows)
        if (r->status != Status::ok) bad = r;
      json b = run_entry(name, family, instance, 1, 0);
      b["error_occurred"] = true;
      b["error_message"] = to_string(bad->status) + ": " + bad->reason;
      b["iterations"] = 0;
      b["real_time"] = 0.0;
      b["cpu_time"] = 0.0;
      benchmarks.push_back(std::move(b));
      continue;
    }
    // cpu_time is the host time per call (measured once per row, in its own pass); where there is
    // none (it was not measured), the GPU time, as Google Benchmark's manual time does.
    const double calls = static_cast<double>(first.calls_per_sample.value_or(1));
    const double host_ns =
        host_us.empty() ? median_of(medians_ms) * kNsPerMs : median_of(host_us) * 1e3;
    // The runs: every raw sample when the report kept them (so compare.py's U test has data),
    // else one per repetition.
    auto sample_it =
        samples.find(sample_key(first.point_id, first.backend, to_string(first.timing_mode)));
    std::vector<double> runs_ms = sample_it != samples.end() ? sample_it->second : medians_ms;
    const json extra = counters(first);
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
  const RunInfo run = rows.empty() ? RunInfo{} : rows.front().run;
  std::optional<double> mhz;  // the first row that measured it (refused rows did not)
  for (const Row& row : rows)
    if (!mhz) mhz = row.host_mhz;
  const json context = {{"date", run.started_at},
                        {"host_name", run.host_name},
                        {"executable", "attnbench run " + run.config_file},
                        {"num_cpus", run.host_cpus},
                        {"mhz_per_cpu", mhz ? static_cast<int64_t>(std::lround(*mhz)) : 0},
                        {"cpu_scaling_enabled", false},
                        {"caches", json::array()},
                        {"load_avg", json::array()},
                        {"library_build_type", "release"},
                        {"attnbench_report", t.path},
                        {"attnbench_device_name", run.device_name},
                        {"attnbench_git_sha", run.git_sha},
                        {"attnbench_torch_version", run.torch_version},
                        {"attnbench_config_fingerprint", run.config_fingerprint}};
  out << json{{"context", context}, {"benchmarks", benchmarks}}.dump(2, ' ', false,
                                                                     json::error_handler_t::replace)
      << '\n';
}

}  // namespace attnbench
