#include "analysis/summary.hpp"

#include "records/expectations.hpp"
#include "write/table.hpp"

#include <cstdio>

namespace attnbench {

namespace {

std::string short_num(const std::string& text, const char* spec) {
  if (text.empty()) return "";
  try {
    char buf[32];
    std::snprintf(buf, sizeof buf, spec, std::stod(text));
    return buf;
  } catch (const std::exception&) {
    return text;
  }
}

// Predictions first: the misses are what the reader should chase. One line per (backend, point)
// when every timing mode missed the same way.
void print_expectations(const CsvTable& t, std::ostream& out) {
  if (t.column("expectation") < 0) return;
  size_t met = 0, missed = 0;
  std::vector<std::string> lines;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    const std::string& e = t.at(r, "expectation");
    if (e == "met") ++met;
    if (!is_missed(e)) continue;
    ++missed;
    std::string line = t.at(r, "backend") + " @ " + t.at(r, "point_id");
    const std::string rest = e.substr(e.find(':') + 1);
    if (!lines.empty() && lines.back().rfind(line, 0) == 0 && lines.back().size() >= rest.size() &&
        lines.back().compare(lines.back().size() - rest.size(), rest.size(), rest) == 0)
      continue;
    lines.push_back(line + " [" + t.at(r, "timing_mode") + "]:" + rest);
  }
  if (met + missed == 0) return;
  out << "predictions: " << missed << " row(s) missed, " << met << " met\n";
  for (const auto& line : lines) out << "  MISSED " << line << '\n';
  out << '\n';
}

}  // namespace

void print_summary(const CsvTable& t, std::ostream& out) {
  print_expectations(t, out);
  TextTable table;
  table.header = {"point",  "backend", "mode",   "status",    "time_ms", "noise%",  "cpu_us", "ops",
                  "copies", "kernels", "memcpy", "extra_MiB", "rel_err", "TFLOP/s", "expect"};
  std::vector<std::string> reasons;
  for (size_t r = 0; r < t.rows.size(); ++r) {
    auto col = [&](const char* name) { return t.column(name) < 0 ? std::string() : t.at(r, name); };
    const std::string noise = col("time_rel_noise");
    table.rows.push_back(
        {col("point_id"), col("backend"), col("timing_mode"), col("status"),
         short_num(col("time_ms_median"), "%.4g"),
         noise.empty() ? "" : short_num(std::to_string(100 * std::stod(noise)), "%.1f"),
         short_num(col("cpu_us_median"), "%.1f"), col("aten_ops_per_call"),
         col("aten_copies_per_call"), short_num(col("kernels_per_call"), "%g"),
         short_num(col("memcpy_per_call"), "%g"), short_num(col("peak_mem_mib"), "%.1f"),
         short_num(col("rel_err"), "%.1e"), short_num(col("tflops"), "%.3g"),
         col("expectation").substr(0, col("expectation").find(':'))});
    if (col("status") != "ok" && !col("reason").empty())
      reasons.push_back(col("backend") + " @ " + col("point_id") + " [" + col("status") +
                        "]: " + col("reason"));
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
