#include "report/schema.hpp"

#include "base/names.hpp"
#include "report/csv.hpp"

#include <functional>

namespace attnbench {

namespace {

std::string num(const std::optional<double>& v) { return v ? format_number(*v) : ""; }
std::string num(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : ""; }

template <class R>
struct Column {
  const char* name;
  std::function<std::string(const R&)> get;
};

// The one definition of the main CSV: header and every row come from here.
const std::vector<Column<Row>>& row_schema() {
  static const std::vector<Column<Row>> columns = {
      {"schema_version", [](const Row&) { return std::to_string(kCsvSchemaVersion); }},
      {"point_id", [](const Row& r) { return r.point_id; }},
      {"backend", [](const Row& r) { return r.backend; }},
      {"batch", [](const Row& r) { return std::to_string(r.problem.batch); }},
      {"heads", [](const Row& r) { return std::to_string(r.problem.heads); }},
      {"kv_heads", [](const Row& r) { return std::to_string(r.problem.kv_heads); }},
      {"seq_len", [](const Row& r) { return std::to_string(r.problem.seq_len); }},
      {"seq_len_kv", [](const Row& r) { return std::to_string(r.problem.seq_len_kv); }},
      {"head_dim", [](const Row& r) { return std::to_string(r.problem.head_dim); }},
      {"dtype", [](const Row& r) { return to_string(r.problem.dtype); }},
      {"causal", [](const Row& r) { return std::string(r.problem.causal ? "true" : "false"); }},
      {"device", [](const Row& r) { return to_string(r.problem.device); }},
      {"direction", [](const Row& r) { return to_string(r.problem.direction); }},
      {"timing_mode", [](const Row& r) { return to_string(r.timing_mode); }},
      {"repetition", [](const Row& r) { return std::to_string(r.repetition); }},
      {"device_index", [](const Row& r) { return r.device_index; }},
      {"status", [](const Row& r) { return to_string(r.status); }},
      {"reason", [](const Row& r) { return r.reason; }},
      {"time_ms_median", [](const Row& r) { return num(r.time_ms_median); }},
      {"time_ms_p10", [](const Row& r) { return num(r.time_ms_p10); }},
      {"time_ms_p90", [](const Row& r) { return num(r.time_ms_p90); }},
      {"time_rel_spread", [](const Row& r) { return num(r.time_rel_spread); }},
      {"time_rel_noise", [](const Row& r) { return num(r.time_rel_noise); }},
      {"samples", [](const Row& r) { return num(r.samples); }},
      {"calls_per_sample", [](const Row& r) { return num(r.calls_per_sample); }},
      {"cpu_us_median", [](const Row& r) { return num(r.cpu_us_median); }},
      {"cpu_us_p10", [](const Row& r) { return num(r.cpu_us_p10); }},
      {"cpu_us_p90", [](const Row& r) { return num(r.cpu_us_p90); }},
      {"host_mhz", [](const Row& r) { return num(r.host_mhz); }},
      {"host_preempted_per_call", [](const Row& r) { return num(r.host_preempted_per_call); }},
      {"host_migrated_per_call", [](const Row& r) { return num(r.host_migrated_per_call); }},
      {"aten_ops_per_call", [](const Row& r) { return num(r.aten_ops_per_call); }},
      {"aten_ops", [](const Row& r) { return r.aten_ops; }},
      {"aten_ops_nested_per_call", [](const Row& r) { return num(r.aten_ops_nested_per_call); }},
      {"aten_copies_per_call", [](const Row& r) { return num(r.aten_copies_per_call); }},
      {"kernels_per_call", [](const Row& r) { return num(r.kernels_per_call); }},
      {"memcpy_per_call", [](const Row& r) { return num(r.memcpy_per_call); }},
      {"memset_per_call", [](const Row& r) { return num(r.memset_per_call); }},
      {"occupancy_pct", [](const Row& r) { return num(r.occupancy_pct); }},
      {"peak_mem_mib", [](const Row& r) { return num(r.peak_mem_mib); }},
      {"rel_err", [](const Row& r) { return num(r.rel_err); }},
      {"tolerance", [](const Row& r) { return num(r.tolerance); }},
      {"gflop", [](const Row& r) { return num(r.gflop); }},
      {"tflops", [](const Row& r) { return num(r.tflops); }},
      {"pct_of_peak", [](const Row& r) { return num(r.pct_of_peak); }},
      {"sm_clock_mhz_start", [](const Row& r) { return num(r.sm_clock_mhz_start); }},
      {"sm_clock_mhz_end", [](const Row& r) { return num(r.sm_clock_mhz_end); }},
      {"power_w", [](const Row& r) { return num(r.power_w); }},
      {"temperature_c", [](const Row& r) { return num(r.temperature_c); }},
      {"flags", [](const Row& r) { return r.flags; }},
      {"expectation", [](const Row& r) { return r.expectation; }},
      {"device_name", [](const Row& r) { return r.run.device_name; }},
      {"torch_version", [](const Row& r) { return r.run.torch_version; }},
      {"git_sha", [](const Row& r) { return r.run.git_sha; }},
      {"started_at", [](const Row& r) { return r.run.started_at; }},
      {"config", [](const Row& r) { return r.run.config_file; }},
      {"config_fingerprint", [](const Row& r) { return r.run.config_fingerprint; }},
      {"shard", [](const Row& r) { return r.run.shard; }},
  };
  return columns;
}

const std::vector<Column<KernelRow>>& kernel_schema() {
  static const std::vector<Column<KernelRow>> columns = {
      {"schema_version", [](const KernelRow&) { return std::to_string(kCsvSchemaVersion); }},
      {"point_id", [](const KernelRow& r) { return r.point_id; }},
      {"backend", [](const KernelRow& r) { return r.backend; }},
      {"repetition", [](const KernelRow& r) { return std::to_string(r.repetition); }},
      {"kind", [](const KernelRow& r) { return to_string(r.kind); }},
      {"name", [](const KernelRow& r) { return r.name; }},
      {"launches_per_call",
       [](const KernelRow& r) { return num(std::optional<double>(r.launches_per_call)); }},
      {"duration_us_mean",
       [](const KernelRow& r) { return num(std::optional<double>(r.duration_us_mean)); }},
      {"grid", [](const KernelRow& r) { return r.grid; }},
      {"block", [](const KernelRow& r) { return r.block; }},
      {"registers_per_thread", [](const KernelRow& r) { return num(r.registers_per_thread); }},
      {"static_smem_bytes", [](const KernelRow& r) { return num(r.static_smem_bytes); }},
      {"dynamic_smem_bytes", [](const KernelRow& r) { return num(r.dynamic_smem_bytes); }},
      {"theoretical_occupancy_pct",
       [](const KernelRow& r) { return num(r.theoretical_occupancy_pct); }},
      {"bytes", [](const KernelRow& r) { return num(r.bytes); }},
      {"device_name", [](const KernelRow& r) { return r.run.device_name; }},
      {"git_sha", [](const KernelRow& r) { return r.run.git_sha; }},
      {"started_at", [](const KernelRow& r) { return r.run.started_at; }},
  };
  return columns;
}

template <class R>
std::vector<std::string> header_of(const std::vector<Column<R>>& schema) {
  std::vector<std::string> out;
  for (const auto& c : schema) out.push_back(c.name);
  return out;
}

template <class R>
std::vector<std::string> fields_of(const std::vector<Column<R>>& schema, const R& row) {
  std::vector<std::string> out;
  for (const auto& c : schema) out.push_back(c.get(row));
  return out;
}

}  // namespace

bool readable_schema_version(const std::string& text) {
  return text == "1" || text == "2" || text == "3" || text == "4" || text == "5" || text == "6";
}

std::vector<std::string> row_header() { return header_of(row_schema()); }
std::vector<std::string> row_fields(const Row& row) { return fields_of(row_schema(), row); }
std::vector<std::string> kernel_row_header() { return header_of(kernel_schema()); }
std::vector<std::string> kernel_row_fields(const KernelRow& row) {
  return fields_of(kernel_schema(), row);
}

std::vector<std::string> sample_header() {
  return {"point_id", "backend", "timing_mode", "repetition", "sample", "time_ms"};
}

std::vector<std::string> sample_fields(const std::string& point_id, const std::string& backend,
                                       TimingMode mode, int repetition, size_t index,
                                       double time_ms) {
  return {point_id,
          backend,
          to_string(mode),
          std::to_string(repetition),
          std::to_string(index),
          format_number(time_ms)};
}

}  // namespace attnbench
