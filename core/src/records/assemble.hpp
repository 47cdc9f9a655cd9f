// Rows from pass results: pure functions (google/benchmark's CreateRunReport shape), so every rule
// about statuses, flags and derived metrics is tested without LibTorch or a GPU.
#pragma once

#include "measure/pass_results.hpp"
#include "records/run_options.hpp"
#include "records/row.hpp"

#include <optional>
#include <string>
#include <vector>

namespace attnbench {

// What the rows of one (point, backend) share before any pass has run.
struct RowSetup {
  std::string point_id;
  std::string backend;
  std::string backend_build;
  Problem problem;
  RunInfo run;
  std::vector<TimingMode> modes;      // one row each
  std::optional<double> tolerance;    // the dtype's limit for rel_err
  std::optional<double> peak_tflops;     // for pct_of_peak
  std::optional<double> bandwidth_gbps;  // for pct_of_bandwidth and bound
  bool keep_samples = false;
};

// The setup of a (point, backend) under a run's options: one row per CUDA timing mode, or `wall`.
RowSetup row_setup(const std::string& point_id, const Problem& problem, const std::string& backend,
                   const RunOptions& options);

// One row per mode, the kernel rows, the raw samples and the notes. Rules:
//  - refused: every row gets its status and reason, nothing else measured;
//  - correctness: `wrong` when rel_err is NaN or above the tolerance (the row is still timed);
//  - a failed pass sets status and reason for every row, over `wrong`; a failed timing mode only
//    its own row, unless the row already failed;
//  - flags: kernel_set_varies, then per row noise_target_missed and above_peak;
//  - bound: memory when gflop / gbytes is below the ridge peak_tflops / bandwidth, else compute
//    (both ceilings needed); pct_of_bandwidth over 100 flags above_bandwidth.
BackendRecords assemble_records(const RowSetup& setup, const PassResults& results);

}  // namespace attnbench
