// A report as Google Benchmark JSON (what `--benchmark_format=json` writes), so that
// google/benchmark's compare.py and the continuous-benchmarking services that read its JSON take
// attnbench reports. Writers only read rows: this reads a report's CSV.
#pragma once

#include "report/csv.hpp"

#include <ostream>

namespace attnbench {

// One benchmark per row, named point_id/backend/timing_mode: real_time is the median time per
// call, cpu_time the host time per call (cpu_us_median; the median time where it was not
// measured), time_unit "ms", iterations the timed calls; counters TFLOP/s, kernels, host_us,
// rel_err, p10_ms and p90_ms. A row that did not end ok is Google Benchmark's failed benchmark:
// error_occurred with the status and reason as the message.
void write_gbench_json(const CsvTable& report, std::ostream& out);

}  // namespace attnbench
