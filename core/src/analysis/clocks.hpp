// compare's view of the SM clock behind a time metric: the clock each row's samples ran at, the
// values scaled to the base's clock (--normalize-clock), and the verdict a clock difference holds
// back.
#pragma once

#include "analysis/compare.hpp"
#include "records/row.hpp"

#include <cstddef>
#include <vector>

namespace attnbench {

// Both sides' rows' clocks, in group order: both empty unless every row of both has one (the
// median of the clocks after its samples, else the mean around its timing pass: reports before
// schema 12).
struct SideClocks {
  std::vector<double> base, candidate;
  bool known() const { return !base.empty() && !candidate.empty(); }
  double base_mhz() const;  // the sides' medians; known() only
  double candidate_mhz() const;
};
SideClocks side_clocks(const std::vector<Row>& base, const std::vector<size_t>& base_rows,
                       const std::vector<Row>& candidate, const std::vector<size_t>& candidate_rows);

// Each side's values as at the base's clock: a time scales with the clock's inverse, so it is
// multiplied by clock / reference; a rate divided.
void scale_to_base_clock(const SideClocks& clocks, bool higher_is_better,
                         std::vector<double>& base_values, std::vector<double>& candidate_values);

// A better or worse of a time metric held back as `unsure`, saying why: clocks over kClocksApart
// apart (unless normalized), or --normalize-clock without a clock on a side.
void hold_for_clocks(ComparedRow& row, const SideClocks& clocks, bool normalize_clock);

}  // namespace attnbench
