#include "report/compare.hpp"

#include "base/names.hpp"
#include "report/table.hpp"

#include <cstdio>

namespace attnbench {

namespace {

std::string fmt(double v, const char* spec = "%.4g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

std::string verdict_text(const ComparedRow& row) {
  if (row.verdict == Verdict::not_comparable)
    return row.base_status != "ok" || row.candidate_status != "ok"
               ? "n/a: " + row.base_status + " -> " + row.candidate_status
               : "n/a: not measured";
  std::string text = to_string(row.verdict);
  if ((row.verdict == Verdict::better || row.verdict == Verdict::worse) && row.band > 0)
    text += " (band " + fmt(100 * row.band, "%.1f") + "%)";
  if (row.regression) text += ", regression";
  return text;
}

}  // namespace

void print_comparison(const Comparison& c, std::ostream& out, bool markdown) {
  if (c.base_path == c.candidate_path)
    out << c.base_path << ": every backend against '" << c.base_label << "' (ratio = backend / "
        << c.base_label << ")\n\n";
  else
    out << "base: " << c.base_path << " (" << c.base_rows << " rows), new: " << c.candidate_path
        << " (" << c.candidate_rows << " rows), joined " << c.joined << ", only in base "
        << c.only_in_base << ", only in new " << c.only_in_candidate << "\n\n";
  for (const auto& mc : c.metrics) {
    TextTable table;
    table.header = {"point_id",        "backend", "mode",   c.base_label,
                    c.candidate_label, "ratio",   "verdict"};
    auto cell = [](const std::optional<double>& v) { return v ? fmt(*v) : std::string(); };
    for (const auto& row : mc.rows)
      table.rows.push_back({row.point_id, row.backend, row.timing_mode, cell(row.base),
                            cell(row.candidate),
                            row.verdict == Verdict::not_comparable ? "" : fmt(row.ratio, "%.3f"),
                            verdict_text(row)});
    out << (markdown ? "### " : "== ") << mc.metric.name
        << (mc.metric.higher_is_better ? " (higher is better)" : "") << (markdown ? "\n\n" : "\n");
    table.print(out, markdown);
    TextTable summary;
    summary.header = {"backend", "geomean ratio", "rows"};
    for (const auto& g : mc.geomeans)
      summary.rows.push_back({g.backend, fmt(g.ratio, "%.3f"), std::to_string(g.rows)});
    out << '\n';
    summary.print(out, markdown);
    out << '\n';
  }
  if (c.fail_on_regression_pct)
    out << c.regressions << " regression(s): worse beyond the noise band and by more than "
        << fmt(*c.fail_on_regression_pct) << "%\n";
}

}  // namespace attnbench
