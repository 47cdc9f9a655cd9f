#include "csv.hpp"

#include "errors.hpp"
#include "types.hpp"

#include <charconv>
#include <filesystem>
#include <functional>
#include <sstream>

namespace attnbench {

std::string to_string(Status status) {
  switch (status) {
    case Status::ok: return "ok";
    case Status::unsupported: return "unsupported";
    case Status::wrong: return "wrong";
    case Status::error: return "error";
    case Status::oom: return "oom";
  }
  return "?";
}

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
      {"seq_len", [](const Row& r) { return std::to_string(r.problem.seq_len); }},
      {"head_dim", [](const Row& r) { return std::to_string(r.problem.head_dim); }},
      {"dtype", [](const Row& r) { return to_string(r.problem.dtype); }},
      {"causal", [](const Row& r) { return std::string(r.problem.causal ? "true" : "false"); }},
      {"device", [](const Row& r) { return to_string(r.problem.device); }},
      {"timing_mode", [](const Row& r) { return r.timing_mode; }},
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
      {"aten_ops_per_call", [](const Row& r) { return num(r.aten_ops_per_call); }},
      {"aten_ops", [](const Row& r) { return r.aten_ops; }},
      {"aten_ops_nested_per_call", [](const Row& r) { return num(r.aten_ops_nested_per_call); }},
      {"aten_copies_per_call", [](const Row& r) { return num(r.aten_copies_per_call); }},
      {"kernels_per_call", [](const Row& r) { return num(r.kernels_per_call); }},
      {"memcpy_per_call", [](const Row& r) { return num(r.memcpy_per_call); }},
      {"memset_per_call", [](const Row& r) { return num(r.memset_per_call); }},
      {"peak_mem_mib", [](const Row& r) { return num(r.peak_mem_mib); }},
      {"rel_err", [](const Row& r) { return num(r.rel_err); }},
      {"tolerance", [](const Row& r) { return num(r.tolerance); }},
      {"gflop", [](const Row& r) { return num(r.gflop); }},
      {"tflops", [](const Row& r) { return num(r.tflops); }},
      {"pct_of_peak", [](const Row& r) { return num(r.pct_of_peak); }},
      {"flags", [](const Row& r) { return r.flags; }},
      {"device_name", [](const Row& r) { return r.run.device_name; }},
      {"torch_version", [](const Row& r) { return r.run.torch_version; }},
      {"git_sha", [](const Row& r) { return r.run.git_sha; }},
      {"started_at", [](const Row& r) { return r.run.started_at; }},
      {"config", [](const Row& r) { return r.run.config_file; }},
  };
  return columns;
}

const std::vector<Column<KernelRow>>& kernel_schema() {
  static const std::vector<Column<KernelRow>> columns = {
      {"schema_version", [](const KernelRow&) { return std::to_string(kCsvSchemaVersion); }},
      {"point_id", [](const KernelRow& r) { return r.point_id; }},
      {"backend", [](const KernelRow& r) { return r.backend; }},
      {"kind", [](const KernelRow& r) { return r.kind; }},
      {"name", [](const KernelRow& r) { return r.name; }},
      {"launches_per_call", [](const KernelRow& r) { return num(std::optional<double>(r.launches_per_call)); }},
      {"duration_us_mean", [](const KernelRow& r) { return num(std::optional<double>(r.duration_us_mean)); }},
      {"grid", [](const KernelRow& r) { return r.grid; }},
      {"block", [](const KernelRow& r) { return r.block; }},
      {"registers_per_thread", [](const KernelRow& r) { return num(r.registers_per_thread); }},
      {"static_smem_bytes", [](const KernelRow& r) { return num(r.static_smem_bytes); }},
      {"dynamic_smem_bytes", [](const KernelRow& r) { return num(r.dynamic_smem_bytes); }},
      {"theoretical_occupancy_pct", [](const KernelRow& r) { return num(r.theoretical_occupancy_pct); }},
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

std::string format_number(double value) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);  // shortest that reads back exactly
  if (ec != std::errc()) throw std::logic_error("cannot format a number for the CSV");
  return std::string(buf, end);
}

std::vector<std::string> row_header() { return header_of(row_schema()); }
std::vector<std::string> row_fields(const Row& row) { return fields_of(row_schema(), row); }
std::vector<std::string> kernel_row_header() { return header_of(kernel_schema()); }
std::vector<std::string> kernel_row_fields(const KernelRow& row) { return fields_of(kernel_schema(), row); }

std::string csv_escape(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

CsvWriter::CsvWriter(const std::string& path, const std::vector<std::string>& header)
    : path_(path), width_(header.size()) {
  const auto parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  out_.open(path, std::ios::out | std::ios::trunc);
  if (!out_) throw InputError(path + ": cannot open for writing");
  write(header);
}

void CsvWriter::write(const std::vector<std::string>& fields) {
  if (fields.size() != width_) throw std::logic_error("CSV row width differs from its header: " + path_);
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csv_escape(fields[i]);
  out_ << line << '\n';
  out_.flush();  // a killed run keeps every row written so far
  if (!out_) throw std::runtime_error(path_ + ": write failed");
}

int CsvTable::column(const std::string& name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

const std::string& CsvTable::at(size_t row, const std::string& name) const {
  const int c = column(name);
  if (c < 0) throw InputError(path + ": no column '" + name + "'");
  return rows.at(row).at(static_cast<size_t>(c));
}

CsvTable parse_csv(const std::string& text, const std::string& path) {
  CsvTable table;
  table.path = path;
  std::vector<std::vector<std::string>> records;
  std::vector<int> record_lines;  // where each record starts, for messages
  std::vector<std::string> record;
  std::string field;
  bool in_quotes = false, field_started = false;
  int line = 1, record_line = 1;
  auto end_field = [&] {
    record.push_back(std::move(field));
    field.clear();
    field_started = false;
  };
  auto end_record = [&] {
    end_field();
    if (!(record.size() == 1 && record[0].empty())) {  // skip blank lines
      records.push_back(std::move(record));
      record_lines.push_back(record_line);
    }
    record.clear();
    record_line = line;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          in_quotes = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    switch (c) {
      case '"':
        if (field_started || !field.empty())
          throw InputError(path + ":" + std::to_string(line) + ": a quote inside an unquoted field");
        in_quotes = true;
        field_started = true;
        break;
      case ',': end_field(); break;
      case '\r': break;
      case '\n':
        ++line;
        end_record();
        break;
      default:
        field += c;
        field_started = true;
    }
  }
  if (in_quotes) throw InputError(path + ":" + std::to_string(record_line) + ": a quoted field is never closed");
  if (field_started || !field.empty() || !record.empty()) end_record();
  if (records.empty()) throw InputError(path + ": the file is empty, expected a header line");
  table.header = records.front();
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != table.header.size())
      throw InputError(path + ":" + std::to_string(record_lines[r]) + ": row has " + std::to_string(records[r].size()) +
                       " fields, the header has " + std::to_string(table.header.size()));
    table.rows.push_back(std::move(records[r]));
  }
  return table;
}

CsvTable read_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot read the CSV file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_csv(text.str(), path);
}

}  // namespace attnbench
