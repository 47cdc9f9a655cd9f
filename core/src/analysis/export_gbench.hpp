// A report as Google Benchmark JSON (what `--benchmark_format=json` writes), so that
// google/benchmark's compare.py and the continuous-benchmarking services that read its JSON take
// attnbench reports. Writers only read rows: this reads a report's CSV.
#pragma once

#include "analysis/compare.hpp"
#include "write/csv.hpp"

#include <ostream>

namespace attnbench {

// One benchmark per (point, backend, timing mode), named point_id/backend/timing_mode, in
// Google Benchmark's unit (ns): a run per raw sample when the report kept them (`samples`, from
// read_samples), else one per repetition, each with real_time the time per call and cpu_time the
// host time per call (cpu_us_median), then the aggregates mean, median and stddev, as
// --benchmark_repetitions writes them; counters TFLOP/s, kernels, host_us, rel_err, p10_ms and
// p90_ms. A benchmark with a row that did not end ok is Google Benchmark's failed benchmark:
// error_occurred with the status and reason as the message. The context names the machine the
// run was made on (host_name, num_cpus, mhz_per_cpu), and the GPU as attnbench_device_name.
void write_gbench_json(const CsvTable& report, const SampleSets& samples, std::ostream& out);

}  // namespace attnbench
