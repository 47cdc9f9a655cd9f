// The harness's enums. Their names (in configs, CSVs and messages) live in one table each:
// names.hpp.
#pragma once

namespace attnbench {

// How a CUDA sample is timed; CPU points are always timed by the wall clock ("wall").
enum class TimingMode { cold, batch, graph, wall };

// The measurement passes a config can choose; first call and warm-up always run.
enum class Pass { correctness, timing, cpu, memory, ops, kernels, energy };

// The GPU's power state the timing samples are taken in. sustained: back to back, as a server runs
// (the clock settles where the power cap holds it); burst: a sample taken below the SM clock's
// maximum is dropped and the GPU rests before the next, as a published table of a few iterations
// per point is taken.
enum class PowerMode { sustained, burst };

// How a (point, backend, timing mode) ended. crashed and timeout come from isolated workers: the
// worker died (signal, abort, exit, a sticky CUDA error) or gave no answer in time.
enum class Status { ok, unsupported, wrong, error, oom, crashed, timeout };

// A status that makes `run` exit 1: the backend was meant to run the point and did not, or got
// it wrong. ok and unsupported (with its reason) are not failures.
inline bool is_failure(Status s) { return s != Status::ok && s != Status::unsupported; }

// Notes on a row (its `flags` column) and on a compared row. One name per flag: names.cpp; what
// each means: flag_doc() there, printed in docs/columns.md.
enum class Flag {
  noise_target_missed,  // a row's timing stopped at a cap before its noise target
  kernel_set_varies,
  above_peak,
  above_bandwidth,  // more bytes per second than the device's measured bandwidth
  clock_throttled,
  clock_not_recovered,   // burst: the cooldown ran out before the clock was back at its maximum
  clock_held_by_call,    // burst: rested, the call's own mean clock stays below the maximum
  untimed_gpu_work,      // CUPTI saw more GPU time per call than the timed events
  leaked_device_memory,  // memory stayed reserved after the (point, backend): a new worker next
  ended_a_worker,        // charged with a worker that ended during another backend's measurement
  kept_input_sized_state,  // held device memory the size of its k and v between calls
  variant_not_checked,     // a variant of the point barely moves the reference here
  host_clock_differs,    // compare only
  host_preempted,        // compare only
};

// What CUPTI recorded on the GPU.
enum class ActivityKind { kernel, memcpy, memset };

// compare's judgement of one row.
// same: the change's interval lies within the threshold; unsure: it straddles the threshold.
enum class Verdict { same, unsure, better, worse, not_comparable };

}  // namespace attnbench
