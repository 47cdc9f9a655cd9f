// The typed records that measurement produces and writers read. Units are in the field names.
// An empty optional is written as an empty CSV field: "does not apply" or "not measured".
#pragma once

#include "base/enums.hpp"
#include "base/names.hpp"
#include "measure/pass_results.hpp"

#include <attnbench/backend.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnbench {

// Facts about the run, repeated in every row so a CSV stands on its own.
struct RunInfo {
  std::string device_name;
  std::string torch_version;
  std::string git_sha;
  std::string started_at;  // ISO 8601 UTC, one value per run
  std::string config_file;
  std::string config_fingerprint;  // what was measured and how; --resume keeps only rows that match
  std::string shard;               // "K/N" for run --shard K/N; empty: the whole sweep
  std::string host_name;           // the machine the run was made on (its hostname)
  int64_t host_cpus = 0;           // its online CPUs
};

// One row per (point, backend, timing mode).
struct Row {
  std::string point_id;
  std::string backend;
  Problem problem;
  TimingMode timing_mode = TimingMode::wall;
  int repetition = 0;        // 0-based; see BackendRecords
  std::string device_index;  // the GPU a run --devices worker was given; empty: the default one
  Status status = Status::ok;
  std::string reason;
  std::string feed;  // how the backend ran the problem when not natively; empty: native
  std::optional<int64_t> total_q_tokens, total_kv_tokens;  // over the batch's sequences

  std::optional<double> time_ms_median, time_ms_p10, time_ms_p90, time_rel_spread, time_rel_noise;
  std::optional<int64_t> samples;
  std::optional<int64_t> calls_per_sample;
  std::optional<double> cpu_us_median, cpu_us_p10, cpu_us_p90;
  // The host around the cpu pass: the core's effective clock just before it, and per call how
  // often the thread was preempted or ended on another core.
  std::optional<double> host_mhz, host_preempted_per_call, host_migrated_per_call;
  std::optional<double> first_call_ms;  // the first call's wall time (JIT, plans, lazy loading)
  std::optional<int64_t> aten_ops_per_call;         // top-level ATen ops, views not counted
  std::string aten_ops;                             // their names, in call order
  std::optional<int64_t> aten_ops_nested_per_call;  // every ATen op, at any depth
  std::optional<int64_t>
      aten_copies_per_call;  // aten::copy_ of data (not of a wrapped scalar), any depth
  std::optional<double> kernels_per_call, memcpy_per_call, memset_per_call;
  // From the kernels pass (CUPTI): a call's GPU activities' durations added up, and their span.
  std::optional<double> gpu_us_per_call, gpu_span_us_per_call, kernel_us_per_call;
  // Theoretical occupancy of the kernel that takes the most GPU time per call (flash keeps it low
  // on purpose: few, large thread blocks).
  std::optional<double> occupancy_pct;
  std::optional<double> peak_mem_mib;       // device memory above inputs and output
  std::optional<double> peak_reserved_mib;  // what PyTorch's allocator held at most, all passes
  std::optional<double> reserved_left_mib;  // what it still held afterwards, its cache emptied
  std::optional<double> device_mem_left_mib;  // device memory free before less free after
  std::optional<double> device_mem_grown_mib;  // lost over the CPU (or energy) pass's calls
  std::optional<double> device_mem_kept_mib;   // held by the backend between calls
  std::optional<double> rel_err, tolerance;
  // Each variant the point has and how far leaving it out moves the reference, in tolerances:
  // "sinks:8.2;window:31" (VariantCheck).
  std::string variant_moves;
  // fp8_e4m3 points: each input's per-tensor scale (value = fp8 number * scale).
  std::optional<double> fp8_scale_q, fp8_scale_k, fp8_scale_v;
  std::optional<double> gflop, tflops, pct_of_peak;
  // Bytes the call must move at least, the rate that makes, against the device's bandwidth, and
  // which ceiling the row's arithmetic intensity puts it under ("memory" or "compute").
  std::optional<double> gbytes, tb_per_s, pct_of_bandwidth;
  std::string bound;
  // The GPU around the timing pass (NVML): SM clock at its start and end, power and temperature at
  // its end.
  std::optional<double> sm_clock_mhz_start, sm_clock_mhz_end, power_w, temperature_c;
  std::optional<double> clock_limited_ms;
  // The power state the samples were taken in, the clock after each kept sample (median and
  // lowest), and burst's dropped samples and rests.
  std::optional<PowerMode> power_mode;
  std::optional<double> sm_clock_mhz_median, sm_clock_mhz_min;
  std::optional<int64_t> clock_dropped_samples;
  std::optional<double> cooldown_s;
  std::optional<double> energy_j_per_call;  // the energy pass's, in every row of the pair
  std::optional<double> energy_power_w;     // and the board's mean power over its window
  std::string flags;        // ';'-separated Flag names (base/enums.hpp)
  std::string expectation;  // the config's predictions: "", "met" or "missed: ..."
  // The code measured: a hash of the library the backend was loaded from (a plugin, a compiled
  // source) or of its Python file; empty for a backend that never loaded.
  std::string backend_build;
  // The harness's own time on this (point, backend): each pass's wall seconds in the worker, in
  // the order they ran ("first call=0.0120;correctness=0.0310;...").
  std::string pass_seconds;

  RunInfo run;

  void add_flag(Flag flag) { flags += (flags.empty() ? "" : ";") + to_string(flag); }
  bool has_flag(Flag flag) const {
    const std::string name = to_string(flag);
    return (";" + flags + ";").find(";" + name + ";") != std::string::npos;
  }
  void drop_flag(Flag flag) {
    std::string kept;
    size_t start = 0;
    while (start <= flags.size()) {
      const size_t end = std::min(flags.find(';', start), flags.size());
      const std::string one = flags.substr(start, end - start);
      if (!one.empty() && one != to_string(flag)) kept += (kept.empty() ? "" : ";") + one;
      start = end + 1;
    }
    flags = kept;
  }
};

// One row per (point, backend, kernel) in the kernel CSV: a kernel the kernels pass saw
// (KernelStat), and the measurement it joins the main CSV on (point_id, backend).
struct KernelRow : KernelStat {
  std::string point_id;
  std::string backend;
  int repetition = 0;
  RunInfo run;
};

// A trace of a few calls of one (point, backend), as the writers read it: events on a host lane and
// a GPU lane in microseconds from the first call, launches linked to their GPU activity.
enum class TraceLane { host, gpu };

struct TraceEvent {
  std::string name;
  std::string category;  // call, cpu_op, cuda_api, kernel, memcpy, memset
  TraceLane lane = TraceLane::host;
  uint64_t track = 0;  // host: thread number (0 = the calling thread); GPU: stream id
  double start_us = 0, duration_us = 0;
  uint32_t flow = 0;  // correlation id shared by a launch and what it launched; 0: none
  std::vector<std::pair<std::string, std::string>> args;
};

struct Trace {
  int calls = 0;
  std::vector<TraceEvent> events;               // in start order
  std::map<uint64_t, std::string> host_tracks;  // track -> name
};

// The raw samples of one timing pass, for <output>.samples.csv.
struct SampleSeries {
  TimingMode mode = TimingMode::wall;
  std::vector<double> time_ms;
  std::vector<double> sm_clock_mhz;  // each sample's, beside time_ms; empty where none was read
};

// Everything one (point, backend) produced, in the order the writers write it.
struct BackendRecords {
  std::string point_id;
  std::string backend;
  int repetition = 0;     // which pass through the sweep (run --repetitions), set by the run
  std::vector<Row> rows;  // one per timing mode
  std::vector<KernelRow> kernels;
  std::vector<SampleSeries> samples;  // when keep_samples
  std::optional<Trace> trace;         // run --trace
  std::string notes;                  // for the log: e.g. how the kernel set differed between calls
};

// The backend left memory reserved (Flag::leaked_device_memory): its worker is replaced.
inline bool leaked_device_memory(const BackendRecords& records) {
  return !records.rows.empty() && records.rows.front().has_flag(Flag::leaked_device_memory);
}

}  // namespace attnbench
