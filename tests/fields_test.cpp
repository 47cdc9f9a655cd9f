// The field tables are the one place a column or a measurement key is declared: these tests fail
// when a writer, a reader, the worker protocol or the docs miss one.
#include "records/fields.hpp"
#include "analysis/compare.hpp"
#include "config/config.hpp"
#include "config/settings.hpp"
#include "isolate/protocol.hpp"
#include "kinds/problem.hpp"
#include "kinds/problem_kind.hpp"
#include "records/row_columns.hpp"
#include "write/columns_page.hpp"
#include "write/csv.hpp"
#include "write/schema.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace attnbench {
namespace {

// A value for field number i that differs from the record's default and from every other field's:
// a forgotten field cannot pass by carrying the default or a neighbour's value.
template <class R>
FieldValue distinct_value(const Field<R>& f, size_t i) {
  switch (f.type) {
    case FieldType::text:
      if (!f.example.empty()) return f.example;  // a value of a form (a window, a length spec)
      return "text " + std::to_string(i) + ", \"quoted\"\nline";
    case FieldType::integer: return static_cast<int64_t>(1000 + i);
    case FieldType::number: return 1.0 / 3.0 + static_cast<double>(i);
    case FieldType::boolean: return true;
    case FieldType::choice:
    case FieldType::list: {
      const FieldValue default_value = f.get(R{});
      for (const auto& name : f.choices)
        if (f.type == FieldType::choice ? default_value != FieldValue(name)
                                        : default_value != FieldValue(std::vector{name}))
          return f.type == FieldType::choice ? FieldValue(name) : FieldValue(std::vector{name});
      return {};
    }
  }
  return {};
}

// `kind`: the problem kind the record ends with (the fields of other kinds read empty on it).
template <class R>
R every_field_set(const std::vector<Field<R>>& fields, const std::string& kind = "") {
  R r;
  for (size_t i = 0; i < fields.size(); ++i) fields[i].set(r, distinct_value(fields[i], i));
  if (const Field<R>* k = find_field(fields, "kind"); k && !kind.empty()) k->set(r, kind);
  return r;
}

// Whether the field `name` is a field of problem kind `kind` (common, or its own).
bool of_kind(const std::string& name, const std::string& kind) {
  const Field<Problem>* f = find_problem_field(name);
  return !f || f->kinds.empty() || owned_by_kind(*f, kind);
}

std::vector<std::string> kind_names() {
  std::vector<std::string> out;
  for (const ProblemKind* k : problem_kinds()) out.push_back(k->name());
  return out;
}

template <class R>
void expect_same_fields(const std::vector<Field<R>>& fields, const R& want, const R& got) {
  for (const auto& f : fields) EXPECT_EQ(f.get(want), f.get(got)) << "field " << f.name;
}

TEST(Fields, EveryFieldIsSetByTheTestRecord) {
  const Row blank;
  for (const std::string& kind : kind_names()) {
    const Row row = every_field_set(row_fields(), kind);
    for (const auto& f : row_fields())
      if (of_kind(f.name, kind) && (f.name != "kind" || kind != blank.problem.kind))
        EXPECT_NE(f.get(row), f.get(blank)) << f.name << " of " << kind;
  }
}

// A problem field is a column of the main CSV, read through the row's problem, and a row of the
// columns page's axis table: the report and the docs follow kinds/problem.cpp's table.
TEST(Fields, EveryProblemFieldIsAColumnAndADocumentedAxis) {
  const std::string page = columns_markdown();
  const std::string axes = page.substr(page.find("## The problem: `sweep:` axes"));
  for (const auto& f : problem_fields()) {
    const Field<Row>* column = find_field(row_fields(), f.name);
    ASSERT_NE(column, nullptr) << f.name << " is not a column";
    Row row;
    Problem changed = every_field_set(problem_fields());
    row.problem = changed;
    EXPECT_EQ(column->get(row), f.get(changed)) << f.name;
    EXPECT_NE(axes.find("| `" + f.name + "` |"), std::string::npos) << f.name;
  }
}

TEST(Fields, RowAndKernelRowSurviveTheWorkerProtocolFieldByField) {
  for (const std::string& kind : kind_names()) {
    BackendRecords b;
    b.rows = {every_field_set(row_fields(), kind)};
    const Message m = parse_message(records_message(b));
    ASSERT_EQ(m.records.rows.size(), 1u);
    expect_same_fields(row_fields(), b.rows[0], m.records.rows[0]);
  }
  BackendRecords b;
  b.rows = {every_field_set(row_fields())};
  b.kernels = {every_field_set(kernel_row_fields())};
  b.kernels[0].run.torch_version = "only in the protocol";
  const Message m = parse_message(records_message(b));
  ASSERT_EQ(m.records.rows.size(), 1u);
  ASSERT_EQ(m.records.kernels.size(), 1u);
  expect_same_fields(row_fields(), b.rows[0], m.records.rows[0]);
  expect_same_fields(kernel_row_fields(), b.kernels[0], m.records.kernels[0]);
  expect_same_fields(run_info_fields(), b.kernels[0].run, m.records.kernels[0].run);
}

TEST(Fields, RowSurvivesTheCsvFieldByField) {
  for (const std::string& kind : kind_names()) {
    const Row of_kind = every_field_set(row_fields(), kind);
    const CsvTable t = parse_csv(csv_line(row_header()) + csv_line(row_cells(of_kind)), "x.csv");
    expect_same_fields(row_fields(), of_kind, row_from_cells(t, 0));
  }
  const Row row = every_field_set(row_fields());
  const CsvTable t = parse_csv(csv_line(row_header()) + csv_line(row_cells(row)), "x.csv");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.at(0, "schema_version"), std::to_string(kCsvSchemaVersion));
  expect_same_fields(row_fields(), row, row_from_cells(t, 0));
  // A cell that is not of its column's type is refused where it stands.
  CsvTable bad = t;
  bad.rows[0][static_cast<size_t>(bad.column("batch"))] = "many";
  try {
    row_from_cells(bad, 0);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x.csv:2: column 'batch' holds 'many'"), std::string::npos)
        << e.what();
  }
  // An empty cell is not given: a field that cannot be empty keeps its default, one that can is
  // empty; a row number reads through the table by name.
  CsvTable sparse = t;
  sparse.rows[0][static_cast<size_t>(sparse.column("batch"))] = "";
  sparse.rows[0][static_cast<size_t>(sparse.column("time_ms_median"))] = "";
  const Row read = row_from_cells(sparse, 0);
  EXPECT_EQ(read.problem.batch, Problem{}.batch);
  EXPECT_FALSE(read.time_ms_median.has_value());
  EXPECT_EQ(row_number(read, "heads"), static_cast<double>(row.problem.heads));
  EXPECT_EQ(row_number(read, "time_ms_median"), std::nullopt);
  EXPECT_EQ(row_number(row, "time_ms_median"), row.time_ms_median);
  EXPECT_THROW(row_number(row, "backend"), std::out_of_range);  // not a numeric column
  Row written = row;
  set_row_number(written, "time_ms_p90", 2.5);
  set_row_number(written, "samples", 7.0);
  set_row_number(written, "time_ms_p10", std::nullopt);
  EXPECT_EQ(written.time_ms_p90, 2.5);
  EXPECT_EQ(written.samples, 7);
  EXPECT_FALSE(written.time_ms_p10.has_value());
}

TEST(Fields, KernelRowSurvivesTheCsvFieldByField) {
  const KernelRow k = every_field_set(kernel_row_fields());
  const CsvTable t = parse_csv(csv_line(kernel_row_header()) + csv_line(kernel_row_cells(k)), "k");
  KernelRow back;
  for (const auto& f : kernel_row_fields()) f.set(back, parse_field_text(f.type, t.at(0, f.name)));
  expect_same_fields(kernel_row_fields(), k, back);
}

// The column names and their order are the CSV's contract with every report already written:
// version 7 appended host_name and host_cpus to version 6.
TEST(Fields, TheCsvHeadersAreSchemaTen) {
  const std::vector<std::string> want = {"schema_version",
                                         "point_id",
                                         "backend",
                                         "batch",
                                         "heads",
                                         "kv_heads",
                                         "seq_len",
                                         "seq_len_kv",
                                         "head_dim",
                                         "dtype",
                                         "kv_dtype",
                                         "causal",
                                         "device",
                                         "direction",
                                         "seq_lens",
                                         "seq_lens_kv",
                                         "kv_layout",
                                         "page_size",
                                         "page_order",
                                         "window",
                                         "softcap",
                                         "sinks",
                                         "chunk",
                                         "qk_nope_head_dim",
                                         "qk_rope_head_dim",
                                         "v_head_dim",
                                         "kv_lora_rank",
                                         "absorbed",
                                         "index_topk",
                                         "index_pattern",
                                         "linear_num_key_heads",
                                         "linear_num_value_heads",
                                         "linear_key_head_dim",
                                         "linear_value_head_dim",
                                         "state_dtype",
                                         "chunk_size",
                                         "kind",
                                         "scale",
                                         "head_dim_v",
                                         "v_in_k",
                                         "family",
                                         "timing_mode",
                                         "repetition",
                                         "device_index",
                                         "status",
                                         "reason",
                                         "feed",
                                         "total_q_tokens",
                                         "total_kv_tokens",
                                         "time_ms_median",
                                         "time_ms_p10",
                                         "time_ms_p90",
                                         "time_rel_spread",
                                         "time_rel_noise",
                                         "samples",
                                         "calls_per_sample",
                                         "cpu_us_median",
                                         "cpu_us_p10",
                                         "cpu_us_p90",
                                         "host_mhz",
                                         "host_preempted_per_call",
                                         "host_migrated_per_call",
                                         "first_call_ms",
                                         "aten_ops_per_call",
                                         "aten_ops",
                                         "aten_ops_nested_per_call",
                                         "aten_copies_per_call",
                                         "kernels_per_call",
                                         "memcpy_per_call",
                                         "memset_per_call",
                                         "gpu_us_per_call",
                                         "gpu_span_us_per_call",
                                         "kernel_us_per_call",
                                         "occupancy_pct",
                                         "peak_mem_mib",
                                         "peak_reserved_mib",
                                         "reserved_left_mib",
                                         "device_mem_left_mib",
                                         "device_mem_grown_mib",
                                         "device_mem_kept_mib",
                                         "rel_err",
                                         "tolerance",
                                         "variant_moves",
                                         "fp8_scale_q",
                                         "fp8_scale_k",
                                         "fp8_scale_v",
                                         "gflop",
                                         "tflops",
                                         "pct_of_peak",
                                         "gbytes",
                                         "tb_per_s",
                                         "pct_of_bandwidth",
                                         "bound",
                                         "sm_clock_mhz_start",
                                         "sm_clock_mhz_end",
                                         "power_w",
                                         "temperature_c",
                                         "clock_limited_ms",
                                         "power_mode",
                                         "sm_clock_mhz_median",
                                         "sm_clock_mhz_min",
                                         "clock_dropped_samples",
                                         "cooldown_s",
                                         "energy_j_per_call",
                                         "energy_power_w",
                                         "flags",
                                         "expectation",
                                         "backend_build",
                                         "pass_seconds",
                                         "device_name",
                                         "torch_version",
                                         "git_sha",
                                         "started_at",
                                         "config",
                                         "config_fingerprint",
                                         "shard",
                                         "host_name",
                                         "host_cpus"};
  EXPECT_EQ(row_header(), want);
  EXPECT_EQ(kernel_row_header(),
            (std::vector<std::string>{"schema_version", "point_id", "backend", "repetition", "kind",
                                      "name", "launches_per_call", "duration_us_mean", "grid",
                                      "block", "registers_per_thread", "static_smem_bytes",
                                      "dynamic_smem_bytes", "theoretical_occupancy_pct", "bytes",
                                      "device_name", "git_sha", "started_at"}));
}

TEST(Fields, CellsAreWrittenAsBefore) {
  Row r;
  r.problem.causal = true;
  r.time_ms_median = 0.1;
  r.samples = 12;
  const auto cells = row_cells(r);
  const auto header = row_header();
  auto cell = [&](const std::string& name) {
    return cells.at(std::find(header.begin(), header.end(), name) - header.begin());
  };
  EXPECT_EQ(cell("causal"), "true");
  EXPECT_EQ(cell("time_ms_median"), "0.1");
  EXPECT_EQ(cell("samples"), "12");
  EXPECT_EQ(cell("time_ms_p10"), "");
  EXPECT_EQ(cell("dtype"), "bf16");
  EXPECT_EQ(cell("timing_mode"), "wall");
}

TEST(Fields, PredictionsMayNameExactlyTheNumericColumnsButRepetition) {
  std::vector<std::string> want;
  for (const auto& f : row_fields())
    if (f.numeric() && f.name != "repetition") want.push_back(f.name);
  EXPECT_EQ(numeric_row_columns(), want);
  Row r = every_field_set(row_fields());
  EXPECT_EQ(numeric_row_value(r, "batch"), 1000 + 2);  // the third field
  EXPECT_THROW(numeric_row_value(r, "repetition"), std::out_of_range);
}

TEST(Fields, CompareJudgesTheMarkedColumnsWithTheirDirection) {
  std::vector<std::string> names;
  for (const auto& m : metric_table()) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "time_ms_median", "time_ms_p10", "time_ms_p90", "cpu_us_median",
                       "aten_ops_per_call", "aten_ops_nested_per_call", "aten_copies_per_call",
                       "kernels_per_call", "memcpy_per_call", "memset_per_call", "peak_mem_mib",
                       "rel_err", "tflops", "pct_of_peak", "tb_per_s", "pct_of_bandwidth"}));
  EXPECT_TRUE(find_metric("tflops").higher_is_better);
  EXPECT_TRUE(find_metric("pct_of_peak").higher_is_better);
  EXPECT_TRUE(find_metric("tb_per_s").higher_is_better);
  EXPECT_FALSE(find_metric("time_ms_median").higher_is_better);
  EXPECT_DOUBLE_EQ(find_metric("time_ms_median").threshold, 0.05);
  EXPECT_DOUBLE_EQ(find_metric("cpu_us_median").threshold, 0.35);
  EXPECT_TRUE(find_metric("kernels_per_call").deterministic());
  EXPECT_TRUE(find_metric("time_ms_median").from_time_samples);
  EXPECT_FALSE(find_metric("time_ms_p10").from_time_samples);
}

TEST(Fields, EveryMeasurementSettingReachesTheWorker) {
  std::vector<Field<MeasureSettings>> fields;
  for (const auto& s : measure_settings_fields()) fields.push_back(s.field);
  RunOptions o;
  o.measurement = every_field_set(fields);
  o.info = every_field_set(run_info_fields());
  const Message m = parse_message(setup_message(o));
  expect_same_fields(fields, o.measurement, m.options.measurement);
  expect_same_fields(run_info_fields(), o.info, m.options.info);
}

TEST(Fields, TheColumnsPageIsTheTables) {
  std::ifstream in(std::string(ATTNBENCH_SOURCE_DIR) + "/docs/columns.md");
  std::stringstream page;
  page << in.rdbuf();
  EXPECT_EQ(page.str(), columns_markdown())
      << "docs/columns.md differs from core/src/records/fields.cpp: regenerate it with "
         "`build/attnbench columns > docs/columns.md`";
}

std::string read_doc(const std::string& name) {
  std::ifstream in(std::string(ATTNBENCH_SOURCE_DIR) + "/docs/" + name);
  std::stringstream page;
  page << in.rdbuf();
  return page.str();
}

// Every key the YAML reader accepts is in the docs: top-level keys in docs/config.md's example,
// measurement keys in docs/columns.md (generated, checked above).
TEST(Fields, EveryConfigKeyIsDocumented) {
  const std::string config_page = read_doc("config.md");
  for (const auto& key : config_keys())
    EXPECT_NE(config_page.find("\n" + key + ":"), std::string::npos) << key;
  const std::string columns_page = read_doc("columns.md");
  for (const auto& s : measure_settings_fields())
    if (s.config_key) EXPECT_NE(columns_page.find("| `" + s.field.name + "` |"), std::string::npos);
}

TEST(Fields, AnIntegerOutOfItsFieldsRangeIsRefused) {
  const Field<MeasureSettings>& f = measure_settings_fields()[1].field;  // min_samples, an int
  MeasureSettings m;
  EXPECT_THROW(f.set(m, int64_t{1} << 40), std::invalid_argument);
  EXPECT_THROW(parse_field_text(FieldType::number, "inf"), std::invalid_argument);
  EXPECT_THROW(parse_field_text(FieldType::integer, "12x"), std::invalid_argument);
}

}  // namespace
}  // namespace attnbench
