#include "analysis/summary.hpp"

#include "records/expectations.hpp"
#include "write/table.hpp"

#include <cstdio>
#include <optional>

namespace attnbench {

namespace {

std::string short_num(const std::optional<double>& value, const char* spec) {
  if (!value) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, spec, *value);
  return buf;
}

std::string count(const std::optional<int64_t>& value) {
  return value ? std::to_string(*value) : "";
}

// Predictions first: the misses are what the reader should chase. One line per (backend, point)
// when every timing mode missed the same way.
void print_expectations(const std::vector<Row>& rows, std::ostream& out) {
  size_t met = 0, missed = 0;
  std::vector<std::string> lines;
  for (const Row& row : rows) {
    const std::string& e = row.expectation;
    if (e == "met") ++met;
    if (!is_missed(e)) continue;
    ++missed;
    std::string line = row.backend + " @ " + row.point_id;
    const std::string rest = e.substr(e.find(':') + 1);
    if (!lines.empty() && lines.back().rfind(line, 0) == 0 && lines.back().size() >= rest.size() &&
        lines.back().compare(lines.back().size() - rest.size(), rest.size(), rest) == 0)
      continue;
    lines.push_back(line + " [" + to_string(row.timing_mode) + "]:" + rest);
  }
  if (met + missed == 0) return;
  out << "predictions: " << missed << " row(s) missed, " << met << " met\n";
  for (const auto& line : lines) out << "  MISSED " << line << '\n';
  out << '\n';
}

}  // namespace

void print_summary(const std::vector<Row>& rows, std::ostream& out) {
  print_expectations(rows, out);
  TextTable table;
  table.header = {"point",  "backend", "mode",   "status",    "time_ms", "noise%",  "cpu_us", "ops",
                  "copies", "kernels", "memcpy", "extra_MiB", "rel_err", "TFLOP/s", "expect"};
  std::vector<std::string> reasons;
  for (const Row& row : rows) {
    const std::optional<double> noise_pct =
        row.time_rel_noise ? std::optional<double>(100 * *row.time_rel_noise) : std::nullopt;
    table.rows.push_back({row.point_id, row.backend, to_string(row.timing_mode),
                          to_string(row.status), short_num(row.time_ms_median, "%.4g"),
                          short_num(noise_pct, "%.1f"), short_num(row.cpu_us_median, "%.1f"),
                          count(row.aten_ops_per_call), count(row.aten_copies_per_call),
                          short_num(row.kernels_per_call, "%g"),
                          short_num(row.memcpy_per_call, "%g"), short_num(row.peak_mem_mib, "%.1f"),
                          short_num(row.rel_err, "%.1e"), short_num(row.tflops, "%.3g"),
                          row.expectation.substr(0, row.expectation.find(':'))});
    if (row.status != Status::ok && !row.reason.empty())
      reasons.push_back(row.backend + " @ " + row.point_id + " [" + to_string(row.status) +
                        "]: " + row.reason);
  }
  table.print(out, false);
  if (!reasons.empty()) {
    out << '\n';
    std::string last;
    for (const auto& line : reasons) {
      if (line == last) continue;  // one line for all timing modes of a row
      out << "  " << line << '\n';
      last = line;
    }
  }
}

}  // namespace attnbench
