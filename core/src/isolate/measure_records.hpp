// One (point, backend) measured in this process and made into its records: what a worker and the
// in-process measurer both do with the runner (built into attnbench_measure, with LibTorch).
#pragma once

#include "measure/runner.hpp"
#include "records/row.hpp"
#include "records/run_options.hpp"

namespace attnbench {

RunnerOptions runner_options(const RunOptions& options);

// The runner's passes, then the rows assembled from their results (records/assemble.hpp).
BackendRecords measure_records(Runner& runner, const RunOptions& options, const Point& point,
                               const LoadedBackend& backend);

}  // namespace attnbench
