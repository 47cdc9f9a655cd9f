#include "records/row_columns.hpp"

#include <functional>
#include <stdexcept>
#include <utility>

namespace attnbench {

namespace {

using Getter = std::function<std::optional<double>(const Row&)>;

template <class T>
std::optional<double> as_double(const std::optional<T>& v) {
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

const std::vector<std::pair<std::string, Getter>>& table() {
  static const std::vector<std::pair<std::string, Getter>> columns = {
      {"batch", [](const Row& r) { return std::optional<double>(r.problem.batch); }},
      {"heads", [](const Row& r) { return std::optional<double>(r.problem.heads); }},
      {"kv_heads", [](const Row& r) { return std::optional<double>(r.problem.kv_heads); }},
      {"seq_len", [](const Row& r) { return std::optional<double>(r.problem.seq_len); }},
      {"seq_len_kv", [](const Row& r) { return std::optional<double>(r.problem.seq_len_kv); }},
      {"head_dim", [](const Row& r) { return std::optional<double>(r.problem.head_dim); }},
      {"time_ms_median", [](const Row& r) { return r.time_ms_median; }},
      {"time_ms_p10", [](const Row& r) { return r.time_ms_p10; }},
      {"time_ms_p90", [](const Row& r) { return r.time_ms_p90; }},
      {"time_rel_spread", [](const Row& r) { return r.time_rel_spread; }},
      {"time_rel_noise", [](const Row& r) { return r.time_rel_noise; }},
      {"samples", [](const Row& r) { return as_double(r.samples); }},
      {"calls_per_sample", [](const Row& r) { return as_double(r.calls_per_sample); }},
      {"cpu_us_median", [](const Row& r) { return r.cpu_us_median; }},
      {"cpu_us_p10", [](const Row& r) { return r.cpu_us_p10; }},
      {"cpu_us_p90", [](const Row& r) { return r.cpu_us_p90; }},
      {"host_mhz", [](const Row& r) { return r.host_mhz; }},
      {"host_preempted_per_call", [](const Row& r) { return r.host_preempted_per_call; }},
      {"host_migrated_per_call", [](const Row& r) { return r.host_migrated_per_call; }},
      {"aten_ops_per_call", [](const Row& r) { return as_double(r.aten_ops_per_call); }},
      {"aten_ops_nested_per_call",
       [](const Row& r) { return as_double(r.aten_ops_nested_per_call); }},
      {"aten_copies_per_call", [](const Row& r) { return as_double(r.aten_copies_per_call); }},
      {"kernels_per_call", [](const Row& r) { return r.kernels_per_call; }},
      {"memcpy_per_call", [](const Row& r) { return r.memcpy_per_call; }},
      {"memset_per_call", [](const Row& r) { return r.memset_per_call; }},
      {"occupancy_pct", [](const Row& r) { return r.occupancy_pct; }},
      {"peak_mem_mib", [](const Row& r) { return r.peak_mem_mib; }},
      {"rel_err", [](const Row& r) { return r.rel_err; }},
      {"tolerance", [](const Row& r) { return r.tolerance; }},
      {"gflop", [](const Row& r) { return r.gflop; }},
      {"tflops", [](const Row& r) { return r.tflops; }},
      {"pct_of_peak", [](const Row& r) { return r.pct_of_peak; }},
      {"sm_clock_mhz_start", [](const Row& r) { return r.sm_clock_mhz_start; }},
      {"sm_clock_mhz_end", [](const Row& r) { return r.sm_clock_mhz_end; }},
      {"power_w", [](const Row& r) { return r.power_w; }},
      {"temperature_c", [](const Row& r) { return r.temperature_c; }},
  };
  return columns;
}

}  // namespace

const std::vector<std::string>& numeric_row_columns() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, get] : table()) out.push_back(name);
    return out;
  }();
  return names;
}

std::optional<double> numeric_row_value(const Row& row, const std::string& column) {
  for (const auto& [name, get] : table())
    if (name == column) return get(row);
  throw std::out_of_range("no numeric column '" + column + "'");
}

}  // namespace attnbench
