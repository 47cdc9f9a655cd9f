#include "records/fields.hpp"

#include "kinds/problem_kind.hpp"
#include "kinds/variant.hpp"

#include <cmath>
#include <map>
#include <stdexcept>

namespace attnbench {

namespace {

// From A/A runs on the H200 (two identical seed sweeps back to back): GPU medians 1-4.5% apart,
// host time per call 15-32% apart.
constexpr double kTimeThreshold = 0.05;
constexpr double kHostTimeThreshold = 0.35;

MetricTraits gpu_time(bool higher_is_better, bool from_samples) {
  return {higher_is_better, "time_rel_noise", "", "", kTimeThreshold, from_samples};
}
MetricTraits host_time() {
  return {false, "", "cpu_us_p10", "cpu_us_p90", kHostTimeThreshold, false, true};
}
MetricTraits count() { return {}; }

// Every check of every kind and variant by name (kinds/list.hpp), for variant_moves' doc.
std::string check_list() {
  std::string out;
  for (const ProblemKind* k : problem_kinds())
    for (const std::string& c : k->check_names()) out += (out.empty() ? "" : ", ") + c;
  for (const ProblemVariant* v : problem_variants())
    for (const std::string& c : v->check_names()) out += (out.empty() ? "" : ", ") + c;
  return out;
}

template <class R>
Field<R> judged(Field<R> f, MetricTraits traits) {
  f.metric = traits;
  return f;
}
template <class R>
Field<R> not_predictable(Field<R> f) {
  f.predictable = false;
  return f;
}

template <class R>
void append(std::vector<Field<R>>& to, const std::vector<Field<R>>& more) {
  to.insert(to.end(), more.begin(), more.end());
}

}  // namespace

const std::vector<Field<RunInfo>>& run_info_fields() {
  using I = RunInfo;
  static const std::vector<Field<I>> fields = {
      field("device_name", &I::device_name, "", "the GPU's name, or the CPU's"),
      field("torch_version", &I::torch_version, "", "LibTorch's version"),
      field("git_sha", &I::git_sha, "", "attnbench's commit (`-dirty` with local changes)"),
      field("started_at", &I::started_at, "", "when the run started, ISO 8601 UTC"),
      field("config", &I::config_file, "", "the sweep's YAML file"),
      field("config_fingerprint", &I::config_fingerprint, "",
            "16 hex digits over the points, measurement settings, tolerances, seed and peak: "
            "--resume and merge keep only matching rows"),
      field("shard", &I::shard, "", "`K/N` for run --shard K/N; empty for a whole sweep"),
      field("host_name", &I::host_name, "", "the machine the run was made on (hostname)"),
      field("host_cpus", &I::host_cpus, "count", "its online CPUs"),
  };
  return fields;
}

const std::vector<Field<Row>>& row_fields() {
  static const std::vector<Field<Row>> fields = [] {
    std::vector<Field<Row>> f = {
        field("point_id", &Row::point_id, "", "the problem as one word; join key"),
        field("backend", &Row::backend, "", "the plugin's name"),
    };
    append(f, nested(&Row::problem, problem_fields()));
    append(
        f,
        {
            field("timing_mode", &Row::timing_mode, "",
                  "how time_ms_* was taken: `cold`, `batch`, `graph` (CUDA) or `wall` (CPU)"),
            not_predictable(field("repetition", &Row::repetition, "count",
                                  "0-based pass through the sweep (run --repetitions)")),
            field("device_index", &Row::device_index, "",
                  "the GPU a run --devices worker measured on; empty without --devices"),
            field("status", &Row::status, "",
                  "`ok`, `unsupported`, `wrong`, `error`, `oom`, `crashed` or `timeout`"),
            field("reason", &Row::reason, "", "why, when status is not ok"),
            field("feed", &Row::feed, "",
                  "how the backend ran a variant it has no entry point for (padded to the "
                  "longest sequence with a mask, say); empty: natively"),
            field("total_q_tokens", &Row::total_q_tokens, "count",
                  "query rows over the batch's sequences"),
            field("total_kv_tokens", &Row::total_kv_tokens, "count",
                  "key/value rows over the batch's sequences (each cache in full)"),
            judged(field("time_ms_median", &Row::time_ms_median, "ms",
                         "median time per call over the samples"),
                   gpu_time(false, true)),
            judged(field("time_ms_p10", &Row::time_ms_p10, "ms", "10th percentile time per call"),
                   gpu_time(false, false)),
            judged(field("time_ms_p90", &Row::time_ms_p90, "ms", "90th percentile time per call"),
                   gpu_time(false, false)),
            field("time_rel_spread", &Row::time_rel_spread, "ratio", "(p90 - p10) / median"),
            field("time_rel_noise", &Row::time_rel_noise, "ratio",
                  "robust relative standard deviation: max(1.4826 MAD, IQR / 1.349) / median"),
            field("samples", &Row::samples, "count", "timing samples taken"),
            field("calls_per_sample", &Row::calls_per_sample, "count",
                  "calls (or graph replays) between the two clock reads of one sample"),
            judged(field("cpu_us_median", &Row::cpu_us_median, "us",
                         "host wall time per call (CUDA: to enqueue it; CPU: to run it), no "
                         "profiler attached"),
                   host_time()),
            field("cpu_us_p10", &Row::cpu_us_p10, "us", "10th percentile host time per call"),
            field("cpu_us_p90", &Row::cpu_us_p90, "us", "90th percentile host time per call"),
            field("host_mhz", &Row::host_mhz, "MHz",
                  "the worker core's effective clock just before the cpu pass"),
            field("host_preempted_per_call", &Row::host_preempted_per_call, "count",
                  "involuntary context switches per call in the cpu pass"),
            field("host_migrated_per_call", &Row::host_migrated_per_call, "count",
                  "moves to another core per call in the cpu pass"),
            field("first_call_ms", &Row::first_call_ms, "ms",
                  "wall time of the first call at this point in its worker, to the device's end "
                  "of it: a JIT's compile and autotuning (torch.compile, Triton), a library's plan "
                  "selection and lazy module loading; the first point of a worker pays for more"),
            judged(field("aten_ops_per_call", &Row::aten_ops_per_call, "count",
                         "ATen ops the backend called itself (top level, views not counted)"),
                   count()),
            field("aten_ops", &Row::aten_ops, "", "those ops' names in call order"),
            judged(field("aten_ops_nested_per_call", &Row::aten_ops_nested_per_call, "count",
                         "every ATen op at any depth, views included"),
                   count()),
            judged(field("aten_copies_per_call", &Row::aten_copies_per_call, "count",
                         "aten::copy_ of data at any depth: the hidden copies"),
                   count()),
            judged(field("kernels_per_call", &Row::kernels_per_call, "count",
                         "GPU kernels per call (CUPTI, a pass of its own)"),
                   count()),
            judged(field("memcpy_per_call", &Row::memcpy_per_call, "count", "GPU memcpys per call"),
                   count()),
            judged(field("memset_per_call", &Row::memset_per_call, "count", "GPU memsets per call"),
                   count()),
            field("gpu_us_per_call", &Row::gpu_us_per_call, "us",
                  "a call's kernel, memcpy and memset durations added up (CUPTI, kernels pass): "
                  "GPU time without launch gaps or event overhead"),
            field("gpu_span_us_per_call", &Row::gpu_span_us_per_call, "us",
                  "from a call's first GPU activity's start to its last one's end (kernels pass; "
                  "the gaps between launches are the host's under CUPTI, which slows it)"),
            field("kernel_us_per_call", &Row::kernel_us_per_call, "us",
                  "a call's kernel durations alone, without memcpys and memsets (kernels pass): "
                  "what tables made by adding up a profiler's kernel times report"),
            field("occupancy_pct", &Row::occupancy_pct, "%",
                  "theoretical occupancy of the kernel with the most GPU time per call"),
            judged(field("peak_mem_mib", &Row::peak_mem_mib, "MiB",
                         "peak device memory a call allocated beyond its inputs and output"),
                   count()),
            field("peak_reserved_mib", &Row::peak_reserved_mib, "MiB",
                  "the most device memory PyTorch's caching allocator reserved during this "
                  "(point, backend), inputs included; the cache is emptied before each"),
            field("reserved_left_mib", &Row::reserved_left_mib, "MiB",
                  "what the allocator still reserved after this (point, backend), its objects "
                  "freed and the cache emptied: memory it kept (see leaked_device_memory)"),
            field("device_mem_left_mib", &Row::device_mem_left_mib, "MiB",
                  "the device's free memory (cudaMemGetInfo) before this (point, backend) less "
                  "after it, its objects freed and the cache emptied: memory it kept, in "
                  "PyTorch's allocator or outside it (see leaked_device_memory); empty while "
                  "another process had the GPU (NVML lists it): its memory is not this row's"),
            field("device_mem_grown_mib", &Row::device_mem_grown_mib, "MiB",
                  "device memory nobody held (free, or cached by PyTorch's allocator) before the "
                  "CPU pass's calls (else the energy pass's) less after them: memory that grows "
                  "call after call, after every first-call set-up (see leaked_device_memory); "
                  "empty while another process had the GPU"),
            field("device_mem_kept_mib", &Row::device_mem_kept_mib, "MiB",
                  "device memory the backend holds between calls, its result let go: what each "
                  "of its points in this worker grew it by, from its inputs made to after its "
                  "calls (the harness's own buffers left out), added up: workspaces, plans, "
                  "caches, a copy kept from point to point (see kept_input_sized_state); empty "
                  "while another process had the GPU"),
            judged(field("rel_err", &Row::rel_err, "ratio",
                         "largest per-row relative error against float64, on rows drawn from the "
                         "seed (every row of the output is also checked against float32, judged "
                         "against twice the tolerance: docs/correctness.md)"),
                   count()),
            field("tolerance", &Row::tolerance, "ratio",
                  "the limit for rel_err: the dtype's, grown with head_dim and seq_len_kv"),
            field("variant_moves", &Row::variant_moves, "",
                  "each check of the point's kind and variants (" + check_list() +
                      ") and how far leaving it out moves the float64 reference, in tolerances "
                      "(`sinks:8.2;window:31`); from 4 an output ignoring it cannot pass (see "
                      "variant_not_checked)"),
            field("fp8_scale_q", &Row::fp8_scale_q, "",
                  "fp8_e4m3: q's per-tensor scale (value = fp8 number x scale; amax / 448)"),
            field("fp8_scale_k", &Row::fp8_scale_k, "",
                  "fp8_e4m3 or an fp8 KV cache: k's per-tensor scale"),
            field("fp8_scale_v", &Row::fp8_scale_v, "",
                  "fp8_e4m3 or an fp8 KV cache: v's per-tensor scale"),
            field(
                "gflop", &Row::gflop, "GFLOP",
                "useful work: 4 heads head_dim pairs, over every sequence's pairs inside the "
                "mask (causal, window), 2.5x bwd"),
            judged(field("tflops", &Row::tflops, "TFLOP/s", "gflop / time_ms_median"),
                   gpu_time(true, true)),
            judged(field("pct_of_peak", &Row::pct_of_peak, "%",
                         "tflops against the matmul peak of the row's dtype: fp8 rows against "
                         "the fp8 one (attnbench calibrate, or peak_tflops and peak_tflops_fp8)"),
                   gpu_time(true, true)),
            field("gbytes", &Row::gbytes, "GB",
                  "the least the call moves: q and out once, the k and v rows some query sees "
                  "once, the page table; bwd adds grad_out, dq, dk and dv"),
            judged(field("tb_per_s", &Row::tb_per_s, "TB/s", "gbytes / time_ms_median"),
                   gpu_time(true, true)),
            judged(field("pct_of_bandwidth", &Row::pct_of_bandwidth, "%",
                         "tb_per_s against the device's measured bandwidth (attnbench calibrate: "
                         "the larger of a device copy's and the fastest read's)"),
                   gpu_time(true, true)),
            field("bound", &Row::bound, "",
                  "`memory` when gflop / gbytes is below the ridge (peak TFLOP/s over bandwidth), "
                  "else `compute`; empty without both ceilings"),
            field("sm_clock_mhz_start", &Row::sm_clock_mhz_start, "MHz",
                  "SM clock (NVML) when the timing pass started"),
            field("sm_clock_mhz_end", &Row::sm_clock_mhz_end, "MHz",
                  "SM clock when the timing pass ended"),
            field("power_w", &Row::power_w, "W", "board power at the end of the timing pass"),
            field("temperature_c", &Row::temperature_c, "C",
                  "GPU temperature at the end of the timing pass"),
            field("clock_limited_ms", &Row::clock_limited_ms, "ms",
                  "how long the power and thermal limiters held the SM clock below its "
                  "application clock during the timing pass (NVML's violation counters)"),
            field("power_mode", &Row::power_mode, "",
                  "CUDA rows: `sustained` (samples back to back) or `burst` (each sample at the "
                  "SM clock's maximum, the GPU rested between): measurement.power"),
            field("sm_clock_mhz_median", &Row::sm_clock_mhz_median, "MHz",
                  "SM clock of each kept sample, their median: the clock behind "
                  "time_ms_median (compare weighs it). A sample's clock is its mean during the "
                  "sample (SM cycles over the GPU's timer, read by a kernel at either end) where "
                  "the sample lasts 0.2 ms or more, else NVML's reading right after it"),
            field("sm_clock_mhz_min", &Row::sm_clock_mhz_min, "MHz", "and their lowest"),
            field("clock_dropped_samples", &Row::clock_dropped_samples, "count",
                  "power burst: samples dropped for a clock below the maximum, each followed by a "
                  "rest"),
            field("cooldown_s", &Row::cooldown_s, "s", "power burst: the rests, added up"),
            field("energy_j_per_call", &Row::energy_j_per_call, "J",
                  "the board's energy per call (NVML's counter between two of its ticks, calls "
                  "back to back, idle power included; the energy pass): same in every mode's row"),
            field("energy_power_w", &Row::energy_power_w, "W",
                  "the board's mean power over the energy pass (energy_j_per_call x calls / "
                  "window): with energy_j_per_call, how long a call took back to back there"),
            field("flags", &Row::flags, "", "`;`-separated notes (docs/columns.md, Flags)"),
            field("expectation", &Row::expectation, "",
                  "the config's predictions: empty, `met`, `missed: ...`, or `unjudged: ...` (a "
                  "relation to a row another shard measures)"),
            field("backend_build", &Row::backend_build, "",
                  "the code measured: `so:` and a hash of the library the backend was loaded "
                  "from (a plugin, a compiled source with what it includes), or `py:` and a "
                  "hash of its Python file; --resume, merge and compare refuse a backend of two"),
            field("pass_seconds", &Row::pass_seconds, "s",
                  "the harness's own time on this (point, backend): each pass's wall seconds in "
                  "the worker, in the order they ran (`first call=0.0120;correctness=0.0310;...`; "
                  "tools/harness_profile.py adds them up); the same in every mode's row"),
        });
    append(f, nested(&Row::run, run_info_fields()));
    return f;
  }();
  return fields;
}

const std::vector<Field<KernelStat>>& kernel_stat_fields() {
  using K = KernelStat;
  static const std::vector<Field<K>> fields = {
      field("kind", &K::kind, "", "`kernel`, `memcpy` or `memset`"),
      field("name", &K::name, "", "demangled kernel name, or `memcpy DtoD`, ..."),
      field("launches_per_call", &K::launches_per_call, "count",
            "launches with this grid and block per call"),
      field("duration_us_mean", &K::duration_us_mean, "us",
            "mean duration on the GPU (CUPTI timestamps)"),
      field("grid", &K::grid, "", "launch grid x,y,z"),
      field("block", &K::block, "", "launch block x,y,z"),
      field("registers_per_thread", &K::registers_per_thread, "count", "as CUPTI recorded it"),
      field("static_smem_bytes", &K::static_smem_bytes, "bytes", "static shared memory"),
      field("dynamic_smem_bytes", &K::dynamic_smem_bytes, "bytes", "dynamic shared memory"),
      field("theoretical_occupancy_pct", &K::theoretical_occupancy_pct, "%",
            "resident warps per SM over the maximum (CUDA occupancy calculator)"),
      field("bytes", &K::bytes, "bytes", "memcpy/memset size"),
  };
  return fields;
}

namespace {
const Field<Row>& numeric_row_field(const std::string& name) {
  static const std::map<std::string, const Field<Row>*> numeric = [] {
    std::map<std::string, const Field<Row>*> out;
    for (const auto& f : row_fields())
      if (f.numeric()) out[f.name] = &f;
    return out;
  }();
  auto it = numeric.find(name);
  if (it == numeric.end()) throw std::out_of_range("'" + name + "' is not a numeric column");
  return *it->second;
}
}  // namespace

std::optional<double> row_number(const Row& row, const std::string& name) {
  const FieldValue v = numeric_row_field(name).get(row);
  if (const double* d = std::get_if<double>(&v)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::nullopt;
}

void set_row_number(Row& row, const std::string& name, std::optional<double> value) {
  const Field<Row>& f = numeric_row_field(name);
  if (!value)
    f.set(row, FieldValue{});
  else if (f.type == FieldType::integer)
    f.set(row, static_cast<int64_t>(std::llround(*value)));
  else
    f.set(row, *value);
}

const std::vector<Field<KernelRow>>& kernel_row_fields() {
  using K = KernelRow;
  static const std::vector<Field<K>> fields = [] {
    std::vector<Field<K>> f = {
        field("point_id", &K::point_id, "", "as in the main CSV"),
        field("backend", &K::backend, "", "as in the main CSV"),
        field("repetition", &K::repetition, "count", "as in the main CSV"),
    };
    append(f, inherited<K>(kernel_stat_fields()));
    for (const auto& g : nested(&K::run, run_info_fields()))
      if (g.name == "device_name" || g.name == "git_sha" || g.name == "started_at") f.push_back(g);
    return f;
  }();
  return fields;
}

}  // namespace attnbench
