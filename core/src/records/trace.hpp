// The trace pass's result as records (row.hpp's Trace): a pure function, tested without a GPU.
#pragma once

#include "measure/pass_results.hpp"

#include "records/row.hpp"

namespace attnbench {

// Host spans and GPU activities on one time line (CUPTI's clock mapped onto the steady clock by the
// two clock pairs the pass took), relative to the first call's start.
Trace trace_records(const TraceResult& result);

}  // namespace attnbench
