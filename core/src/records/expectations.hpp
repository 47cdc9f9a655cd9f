// Predictions (records/predictions.hpp) checked against rows: each row's `expectation` column is
// empty (nothing predicted for it), "met", "missed: " and every miss as predicted vs seen, or
// "unjudged: " when what it compares against is another shard's.
// Pure functions of rows, tested without LibTorch.
#pragma once

#include "records/predictions.hpp"
#include "records/row.hpp"

#include <functional>
#include <set>
#include <string>

namespace attnbench {

// The row another backend produced at the same point, timing mode and repetition; null when it has
// none (not in this run, or not measured yet).
using PeerRow = std::function<const Row*(const std::string& backend)>;

// Whether `expectation` applies to `row` (its backend and its `where`).
bool applies(const Expectation& expectation, const Row& row);

// The expectation column for `row`. `elsewhere`: the backends whose rows at this point another
// shard measures (run --shard): a relation to one of them is "unjudged", left to `merge`, not
// missed.
std::string judge_row(const Row& row, const Expectations& expectations, const PeerRow& peer,
                      const std::set<std::string>& elsewhere = {});

// The backends `backend`'s predictions compare against, at any point: their rows must be measured
// before its own can be judged.
std::set<std::string> peers_of(const Expectations& expectations, const std::string& backend);

// True when an expectation column says a prediction was missed.
bool is_missed(const std::string& expectation);

}  // namespace attnbench
