// Predictions judged again over a whole report: a run resumed (its kept rows and its new ones) or
// shards merged, so that a relation (faster_than: flash) sees the rows another run or shard wrote
// and says what an uninterrupted run would have said.
#pragma once

#include "records/predictions.hpp"

#include <string>

namespace attnbench {

// The report's text (`path` for messages) with every row's expectation column judged against the
// rows of its point and repetition. Rows and columns otherwise unchanged; no rows: unchanged.
std::string rejudged_report(const std::string& text, const std::string& path,
                            const Expectations& expect);

}  // namespace attnbench
