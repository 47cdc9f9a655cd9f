#include "analysis/compare.hpp"

#include "base/names.hpp"
#include "write/table.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
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
  if (row.threshold > 0 || row.ci_low != row.ci_high)  // a noisy metric: where the ratio lies
    text += " [" + fmt(row.ci_low, "%.3f") + ", " + fmt(row.ci_high, "%.3f") + "]" +
            (row.interval_from == IntervalBasis::noise ? " (noise)" : "");
  if (row.regression) text += ", regression";
  return text;
}

nlohmann::json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

void print_json(const Comparison& c, std::ostream& out) {
  using nlohmann::json;
  json metrics = json::array();
  for (const auto& mc : c.metrics) {
    json rows = json::array(), geomeans = json::array();
    for (const auto& r : mc.rows) {
      const bool comparable = r.verdict != Verdict::not_comparable;
      rows.push_back({{"point_id", r.point_id},
                      {"backend", r.backend},
                      {"timing_mode", r.timing_mode},
                      {"metric", mc.metric.name},
                      {"base", optional_number(r.base)},
                      {"new", optional_number(r.candidate)},
                      {"ratio", comparable ? json(r.ratio) : json(nullptr)},
                      {"ci_low", comparable ? json(r.ci_low) : json(nullptr)},
                      {"ci_high", comparable ? json(r.ci_high) : json(nullptr)},
                      {"interval_from", to_string(r.interval_from)},
                      {"threshold", r.threshold},
                      {"base_repetitions", r.base_repetitions},
                      {"new_repetitions", r.candidate_repetitions},
                      {"band", comparable ? json(r.band) : json(nullptr)},
                      {"verdict", comparable ? to_string(r.verdict) : "n/a"},
                      {"regression", r.regression},
                      {"base_status", r.base_status},
                      {"new_status", r.candidate_status},
                      {"flags", r.flags},
                      {"why_unsure", r.why_unsure},
                      {"repetitions_needed", r.repetitions_needed}});
    }
    for (const auto& g : mc.geomeans)
      geomeans.push_back({{"backend", g.backend},
                          {"ratio", g.ratio},
                          {"ci_low", g.ci_low},
                          {"ci_high", g.ci_high},
                          {"rows", g.rows}});
    metrics.push_back({{"metric", mc.metric.name},
                       {"higher_is_better", mc.metric.higher_is_better},
                       {"rows", rows},
                       {"geomeans", geomeans}});
  }
  const json doc = {
      {"base", {{"path", c.base_path}, {"label", c.base_label}, {"rows", c.base_rows}}},
      {"new",
       {{"path", c.candidate_path}, {"label", c.candidate_label}, {"rows", c.candidate_rows}}},
      {"joined", c.joined},
      {"only_in_base", c.only_in_base},
      {"only_in_new", c.only_in_candidate},
      {"fail_on_regression_pct", optional_number(c.fail_on_regression_pct)},
      {"regressions", c.regressions},
      {"metrics", metrics}};
  out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace

void print_comparison(const Comparison& c, std::ostream& out, CompareFormat format) {
  if (format == CompareFormat::json) return print_json(c, out);
  const bool markdown = format == CompareFormat::markdown;
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
    const bool any_flags = std::any_of(mc.rows.begin(), mc.rows.end(),
                                       [](const ComparedRow& r) { return !r.flags.empty(); });
    if (any_flags) table.header.push_back("flags");
    auto cell = [](const std::optional<double>& v) { return v ? fmt(*v) : std::string(); };
    for (const auto& row : mc.rows) {
      table.rows.push_back({row.point_id, row.backend, row.timing_mode, cell(row.base),
                            cell(row.candidate),
                            row.verdict == Verdict::not_comparable ? "" : fmt(row.ratio, "%.3f"),
                            verdict_text(row)});
      if (any_flags) table.rows.back().push_back(row.flags);
    }
    out << (markdown ? "### " : "== ") << mc.metric.name
        << (mc.metric.higher_is_better ? " (higher is better)" : "") << (markdown ? "\n\n" : "\n");
    table.print(out, markdown);
    TextTable summary;
    summary.header = {"backend", "geomean ratio", "95% interval", "rows"};
    for (const auto& g : mc.geomeans)
      summary.rows.push_back({g.backend, fmt(g.ratio, "%.3f"),
                              "[" + fmt(g.ci_low, "%.3f") + ", " + fmt(g.ci_high, "%.3f") + "]",
                              std::to_string(g.rows)});
    out << '\n';
    summary.print(out, markdown);
    out << '\n';
    // When the data cannot tell: how many rows, why, and how many repetitions would.
    int single = 0, missed = 0, needed = 0, hopeless = 0, clocks = 0, unclocked = 0;
    for (const auto& row : mc.rows) {
      if (row.unsure == Unsure::no) continue;
      if (row.unsure == Unsure::clocks_apart || row.unsure == Unsure::no_clock) {
        ++(row.unsure == Unsure::clocks_apart ? clocks : unclocked);  // no repetitions fix that
        continue;
      }
      (row.unsure == Unsure::noise_target ? missed : single) += 1;
      if (row.repetitions_needed == 0)
        ++hopeless;
      else
        needed = std::max(needed, row.repetitions_needed);
    }
    if (single + missed > 0) {
      out << single + missed << " row(s) unsure because the data cannot tell: " << single
          << " compare single runs, whose run-to-run drift is unknown (their intervals allow the "
             "threshold for it), "
          << missed << " missed their noise target.";
      if (needed > 0)
        out << " Both reports with --repetitions " << needed
            << " would tell the largest of these changes from drift";
      if (hopeless > 0)
        out << (needed > 0 ? "; " : " ") << hopeless
            << " moved less than the threshold: no repetitions make them better or worse";
      out << ".\n\n";
    }
    if (clocks > 0)
      out << clocks << " row(s) unsure because their SM clocks (sm_clock_mhz_median) are over "
          << std::lround(kClocksApart * 100)
          << "% apart: the power state may make the change; --normalize-clock judges them at one "
             "clock.\n\n";
    if (unclocked > 0)
      out << unclocked
          << " row(s) unsure because --normalize-clock needs an SM clock on both sides and a side "
             "has none (a CPU row, or a report from before schema 4).\n\n";
  }
  if (c.fail_on_regression_pct)
    out << c.regressions
        << " regression(s): worse (the whole interval beyond the threshold) and by more than "
        << fmt(*c.fail_on_regression_pct) << "%\n";
}

}  // namespace attnbench
