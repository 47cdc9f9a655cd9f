#include "analysis/clocks.hpp"

#include "base/stats.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

namespace attnbench {

namespace {

std::optional<double> row_clock(const Row& row) {
  if (row.sm_clock_mhz_median) return row.sm_clock_mhz_median;
  if (row.sm_clock_mhz_start && row.sm_clock_mhz_end)
    return (*row.sm_clock_mhz_start + *row.sm_clock_mhz_end) / 2;
  return std::nullopt;
}

// Every row's clock, in order; empty when a row has none.
std::vector<double> group_clocks(const std::vector<Row>& table, const std::vector<size_t>& rows) {
  std::vector<double> out;
  for (size_t r : rows) {
    const auto clock = row_clock(table[r]);
    if (!clock || *clock <= 0) return {};
    out.push_back(*clock);
  }
  return out;
}

void scale(std::vector<double>& values, const std::vector<double>& clocks, double reference,
           bool higher_is_better) {
  std::transform(values.begin(), values.end(), clocks.begin(), values.begin(),
                 [&](double value, double clock) {
                   return value * (higher_is_better ? reference / clock : clock / reference);
                 });
}

}  // namespace

double SideClocks::base_mhz() const { return summarize(base).median; }
double SideClocks::candidate_mhz() const { return summarize(candidate).median; }

SideClocks side_clocks(const std::vector<Row>& base, const std::vector<size_t>& base_rows,
                       const std::vector<Row>& candidate, const std::vector<size_t>& candidate_rows) {
  SideClocks c{group_clocks(base, base_rows), group_clocks(candidate, candidate_rows)};
  if (!c.known()) c.base.clear(), c.candidate.clear();
  return c;
}

void scale_to_base_clock(const SideClocks& clocks, bool higher_is_better,
                         std::vector<double>& base_values, std::vector<double>& candidate_values) {
  const double reference = clocks.base_mhz();
  scale(base_values, clocks.base, reference, higher_is_better);
  scale(candidate_values, clocks.candidate, reference, higher_is_better);
}

void hold_for_clocks(ComparedRow& row, const SideClocks& clocks, bool normalize_clock) {
  if (row.verdict != Verdict::better && row.verdict != Verdict::worse) return;
  if (normalize_clock && !clocks.known()) {
    row.unsure = Unsure::no_clock;
    row.why_unsure = "--normalize-clock: a side has no SM clock (sm_clock_mhz_median)";
  } else if (!normalize_clock && clocks.known() &&
             std::abs(clocks.candidate_mhz() - clocks.base_mhz()) > kClocksApart * clocks.base_mhz()) {
    row.unsure = Unsure::clocks_apart;
    row.why_unsure = "SM clocks " + std::to_string(std::lround(clocks.base_mhz())) + " vs " +
                     std::to_string(std::lround(clocks.candidate_mhz())) +
                     " MHz: the power state may make the change (--normalize-clock, or power: "
                     "burst on both)";
  } else {
    return;
  }
  row.verdict = Verdict::unsure;
  row.repetitions_needed = 0;
}

}  // namespace attnbench
