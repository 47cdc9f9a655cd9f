#include "isolate/measure_records.hpp"

#include "records/assemble.hpp"

namespace attnbench {

RunnerOptions runner_options(const RunOptions& options) {
  return {options.measurement, options.seed, options.on_pass};
}

BackendRecords measure_records(Runner& runner, const RunOptions& options, const Point& point,
                               const LoadedBackend& backend) {
  RowSetup setup = row_setup(point.id, point.problem, backend.name, options);
  setup.backend_build = backend.build;
  return assemble_records(setup, runner.measure(point, backend));
}

}  // namespace attnbench
