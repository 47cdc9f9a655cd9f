// A (point, backend)'s trace in the Chrome trace-event format that torch.profiler exports and
// Perfetto UI and chrome://tracing open: complete ("X") events on a host process (one track per
// thread) and a GPU process (one track per stream), flow arrows ("s"/"f", category ac2g, as
// torch.profiler writes them) from each launch to what it launched.
#pragma once

#include "records/row.hpp"

#include <string>

namespace attnbench {

// The JSON document of `records.trace` (which must be set).
std::string chrome_trace_json(const BackendRecords& records);

// <dir>/<stem>.traces/<point_id>__<backend>.json beside `output_csv`; repetitions after the first
// add __rep<N> (1-based).
std::string trace_path(const std::string& output_csv, const std::string& point_id,
                       const std::string& backend, int repetition);

}  // namespace attnbench
