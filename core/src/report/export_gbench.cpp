#include "report/export_gbench.hpp"

#include "report/compare.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>

namespace attnbench {

namespace {

std::string text(const CsvTable& t, size_t row, const std::string& column) {
  return t.column(column) < 0 ? std::string() : t.at(row, column);
}

}  // namespace

void write_gbench_json(const CsvTable& t, std::ostream& out) {
  using nlohmann::json;
  check_report(t, {});  // a report of a schema this attnbench reads, with its key columns

  // A family is one (point, backend); its instances are the timing modes; run --repetitions
  // gives each instance Google Benchmark's repetitions.
  std::map<std::string, int> family_index, repetitions;
  std::map<std::string, std::map<std::string, int>> instance_index;
  for (size_t r = 0; r < t.rows.size(); ++r)
    ++repetitions[t.at(r, "point_id") + "/" + t.at(r, "backend") + "/" + t.at(r, "timing_mode")];
  json benchmarks = json::array();
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const std::string family = t.at(r, "point_id") + "/" + t.at(r, "backend");
    const std::string name = family + "/" + t.at(r, "timing_mode");
    if (!family_index.count(family)) family_index[family] = static_cast<int>(family_index.size());
    auto& instances = instance_index[family];
    instances.emplace(t.at(r, "timing_mode"), static_cast<int>(instances.size()));
    const std::string rep = text(t, r, "repetition");
    json b = {{"name", name},
              {"family_index", family_index[family]},
              {"per_family_instance_index", instances[t.at(r, "timing_mode")]},
              {"run_name", name},
              {"run_type", "iteration"},
              {"repetitions", repetitions[name]},
              {"repetition_index", rep.empty() ? 0 : std::stoi(rep)},
              {"threads", 1}};
    const auto median = t.number(r, "time_ms_median");
    if (t.at(r, "status") != "ok" || !median) {
      b["error_occurred"] = true;
      b["error_message"] = t.at(r, "status") + ": " + text(t, r, "reason");
      b["iterations"] = 0;
      b["real_time"] = 0.0;
      b["cpu_time"] = 0.0;
      b["time_unit"] = "ms";
      benchmarks.push_back(std::move(b));
      continue;
    }
    const double samples = t.number(r, "samples").value_or(1);
    const double calls = t.number(r, "calls_per_sample").value_or(1);
    const auto host_us = t.number(r, "cpu_us_median");
    b["iterations"] = static_cast<int64_t>(samples * calls);
    b["real_time"] = *median;
    b["cpu_time"] = host_us ? *host_us / 1000 : *median;
    b["time_unit"] = "ms";
    for (const auto& [counter, column] : {std::pair{"TFLOP/s", "tflops"},
                                          {"kernels", "kernels_per_call"},
                                          {"host_us", "cpu_us_median"},
                                          {"rel_err", "rel_err"},
                                          {"p10_ms", "time_ms_p10"},
                                          {"p90_ms", "time_ms_p90"}})
      if (const auto v = t.number(r, column)) b[counter] = *v;
    benchmarks.push_back(std::move(b));
  }

  // Google Benchmark's context, from what the report recorded; 0 and empty where attnbench
  // records nothing (the host's CPUs and caches), plus attnbench's own keys.
  const size_t first = 0;
  const bool any = !t.rows.empty();
  const json context = {
      {"date", any ? text(t, first, "started_at") : ""},
      {"host_name", any ? text(t, first, "device_name") : ""},
      {"executable", "attnbench run " + (any ? text(t, first, "config") : std::string())},
      {"num_cpus", 0},
      {"mhz_per_cpu", 0},
      {"cpu_scaling_enabled", false},
      {"caches", json::array()},
      {"load_avg", json::array()},
      {"library_build_type", "release"},
      {"attnbench_report", t.path},
      {"attnbench_git_sha", any ? text(t, first, "git_sha") : ""},
      {"attnbench_torch_version", any ? text(t, first, "torch_version") : ""},
      {"attnbench_config_fingerprint", any ? text(t, first, "config_fingerprint") : ""}};
  out << json{{"context", context}, {"benchmarks", benchmarks}}.dump(2, ' ', false,
                                                                     json::error_handler_t::replace)
      << '\n';
}

}  // namespace attnbench
