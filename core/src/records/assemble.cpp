#include "records/assemble.hpp"

#include "kinds/problem_kind.hpp"
#include "base/names.hpp"
#include "kinds/problem.hpp"
#include "records/trace.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnbench {

namespace {

Row base_row(const RowSetup& setup) {
  Row row;
  row.point_id = setup.point_id;
  row.backend = setup.backend;
  row.backend_build = setup.backend_build;
  row.problem = setup.problem;
  row.run = setup.run;
  row.gflop = point_flop(setup.problem) / 1e9;
  row.gbytes = point_bytes(setup.problem) / 1e9;
  row.total_q_tokens = total_q_tokens(setup.problem);
  row.total_kv_tokens = total_kv_tokens(setup.problem);
  if (setup.peak_tflops && setup.bandwidth_gbps && *row.gbytes > 0) {
    // The ridge point: FLOP per byte where the two roofs meet.
    const double ridge = *setup.peak_tflops * 1e3 / *setup.bandwidth_gbps;
    row.bound = *row.gflop / *row.gbytes < ridge ? "memory" : "compute";
  }
  row.tolerance = setup.tolerance;
  return row;
}

// A relative error as a reason quotes it.
std::string three_digits(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", value);
  return buf;
}

void mark_wrong(Row& row, std::string why) {
  row.status = Status::wrong;
  row.reason = std::move(why);
}

// The variant the output is attention without: one that moves the reference past
// kVariantMovesTolerances tolerances, with the output nearer the reference without it than the
// reference itself; of several such, the one the output is nearest (a recurrence from zero
// states is also nearer the one without its gate than the reference). Null when none.
const VariantCheck* ignored_variant(const Row& row, const CorrectnessResult& c) {
  if (!row.tolerance) return nullptr;
  const VariantCheck* best = nullptr;
  for (const VariantCheck& v : c.variants)
    if (v.moved >= kVariantMovesTolerances * *row.tolerance && v.off_without < v.off_with &&
        (!best || v.off_without < best->off_without))
      best = &v;
  return best;
}

std::string ignored_words(const VariantCheck& v) {
  const std::string what = v.what.empty() ? "attention without " + v.name : v.what;
  return "the output is " + what + " (off that by " + three_digits(v.off_without) +
         ", off the reference by " + three_digits(v.off_with) + ", while " +
         (v.what.empty() ? "leaving " + v.name + " out" : "that") + " moves the reference by " +
         three_digits(v.moved) + (v.own_call ? " with q drawn wider, so that it bites" : "") +
         "): " + (v.verdict.empty() ? v.name + " ignored" : v.verdict);
}

std::string ignored_clause(const Row& row, const CorrectnessResult& c) {
  const VariantCheck* v = ignored_variant(row, c);
  return v ? "; " + ignored_words(*v) : "";
}

void apply_correctness(Row& row, const CorrectnessResult& c) {
  if (!c.changed_input.empty()) {
    mark_wrong(row, "the backend wrote into its input " + c.changed_input +
                        " (a backend must leave its inputs as it found them; its output cannot "
                        "be checked against inputs it changed)");
    return;
  }
  row.rel_err = c.rel_err;
  const bool output = c.worst == "out";
  if (std::isnan(c.rel_err)) {
    // The result's memory is poisoned (NaN) before the checked call: NaN is also what a backend
    // left unwritten there, or what it handed back a second time without computing it.
    mark_wrong(row, (output ? std::string("the output") : c.worst) +
                        " has non-finite values (computed, or left unwritten: the harness fills "
                        "the last result with NaN before the checked call)");
  } else if (row.tolerance && c.rel_err > *row.tolerance) {
    mark_wrong(row, (output ? "max row relative error " : "relative error of " + c.worst + " ") +
                        three_digits(c.rel_err) + " above the " + to_string(row.problem.dtype) +
                        " tolerance " + three_digits(*row.tolerance) + ignored_clause(row, c));
  } else if (row.tolerance && c.whole_rel_err > kWholeOutputSlack * *row.tolerance) {
    mark_wrong(row, "max row relative error of the whole output " + three_digits(c.whole_rel_err) +
                        " (every row against float32) above " + three_digits(kWholeOutputSlack) +
                        "x the " + to_string(row.problem.dtype) + " tolerance " +
                        three_digits(*row.tolerance) +
                        ": rows, heads or sequences computed wrong or not at all?" +
                        ignored_clause(row, c));
  } else if (const VariantCheck* v = ignored_variant(row, c)) {
    mark_wrong(row, ignored_words(*v));
  } else if (row.tolerance && c.scattered_rel_err &&
             !(*c.scattered_rel_err <= kFollowsSlack * *row.tolerance)) {
    mark_wrong(row, "the output does not follow the page table: with the table's pages scattered "
                    "(drawn in order, each sequence's pages one after another) the output is off "
                    "its reference by " + three_digits(*c.scattered_rel_err) +
                        " (a kernel that reads the cache as if it were contiguous?)");
  } else if (row.tolerance && c.fresh_rel_err &&
             !(*c.fresh_rel_err <= kFollowsSlack * *row.tolerance)) {
    mark_wrong(row,
               "the output does not follow the inputs: after the timed calls q, k and v were "
               "changed in place and the next output is off their reference by " +
                   three_digits(*c.fresh_rel_err) + " (a cached or stale output?)");
  }
}

// The raw samples beside their clocks (kept only where every sample has one, so that they line up).
SampleSeries sample_series(TimingMode mode, const TimingResult& t) {
  SampleSeries series{mode, t.samples, {}};
  if (t.sample_clock_mhz.size() == t.samples.size()) series.sm_clock_mhz = t.sample_clock_mhz;
  return series;
}

// The timed calls' last output against the inputs moved before its sample: a row that was right
// on its first call and then answered without reading its inputs is wrong in this mode.
void apply_followed(Row& row, const TimingResult& t) {
  if (row.status != Status::ok || !row.tolerance || !t.followed_rel_err) return;
  if (*t.followed_rel_err <= kFollowsSlack * *row.tolerance) return;
  mark_wrong(row, "the timed calls did not follow their inputs: q, k and v moved (and a paged "
                  "cache's table rotated) before each sample and the last " + to_string(t.mode) +
                  " output is off their reference by " + three_digits(*t.followed_rel_err) +
                  " (a cached output or state kept from earlier calls, or a graph that does not "
                  "read its inputs?)");
}

void apply_rate(Row& row, const RowSetup& setup) {
  if (!row.time_ms_median || *row.time_ms_median <= 0) return;
  row.tflops = *row.gflop / *row.time_ms_median;  // GFLOP per ms = TFLOP/s
  if (setup.peak_tflops) {
    row.pct_of_peak = 100 * *row.tflops / *setup.peak_tflops;
    if (*row.pct_of_peak > 100) row.add_flag(Flag::above_peak);
  }
  row.tb_per_s = *row.gbytes / *row.time_ms_median;  // GB per ms = TB/s
  if (setup.bandwidth_gbps) {
    row.pct_of_bandwidth = 100 * *row.tb_per_s * 1e3 / *setup.bandwidth_gbps;
    if (*row.pct_of_bandwidth > 100) row.add_flag(Flag::above_bandwidth);
  }
}

void apply_timing(Row& row, const TimingResult& t, const RowSetup& setup) {
  const Summary& s = t.summary;
  row.time_ms_median = s.median, row.time_ms_p10 = s.p10, row.time_ms_p90 = s.p90;
  row.time_rel_spread = s.rel_spread, row.time_rel_noise = s.rel_noise;
  row.samples = s.count;
  row.calls_per_sample = t.calls_per_sample;
  if (!t.converged) row.add_flag(Flag::noise_target_missed);
  if (t.device_start && t.device_end) {
    row.sm_clock_mhz_start = t.device_start->sm_clock_mhz;
    row.sm_clock_mhz_end = t.device_end->sm_clock_mhz;
    row.power_w = t.device_end->power_w;
    row.temperature_c = t.device_end->temperature_c;
    if (t.device_start->limited_ms && t.device_end->limited_ms)
      row.clock_limited_ms = *t.device_end->limited_ms - *t.device_start->limited_ms;
    if (t.device_end->sm_clock_mhz < t.device_start->sm_clock_mhz * (1 - kClockDropFlag))
      row.add_flag(Flag::clock_throttled);
  }
  if (row.timing_mode != TimingMode::wall) row.power_mode = t.power;
  if (!t.sample_clock_mhz.empty()) {
    row.sm_clock_mhz_median = summarize(t.sample_clock_mhz).median;
    row.sm_clock_mhz_min = *std::min_element(t.sample_clock_mhz.begin(), t.sample_clock_mhz.end());
  }
  if (t.power == PowerMode::burst && row.timing_mode != TimingMode::wall) {
    row.clock_dropped_samples = t.dropped_for_clock;
    row.cooldown_s = t.rested_s;
    if (!t.clock_recovered) row.add_flag(Flag::clock_not_recovered);
    if (t.rested_clock_mhz) row.add_flag(Flag::clock_held_by_call);
  }
  apply_rate(row, setup);
}

// The events time the stream the harness calls on; work a backend puts on a stream of its own
// escapes them. CUPTI saw all of it: when a call's GPU time exceeds the timed time by more than
// the timing's noise allows, the row says so and takes its times from the kernels pass.
void cover_untimed_work(Row& row, const KernelsResult& k, const RowSetup& setup) {
  if (row.timing_mode == TimingMode::wall || !row.time_ms_median || k.gpu_us_per_call <= 0) return;
  // Allowed: the timing's noise (three robust standard deviations), at least 10% (clocks differ
  // between passes) and at most 100%: no honest call's kernels take twice its timed time.
  const double timed_us = *row.time_ms_median * 1e3;
  const double slack = std::clamp(3 * row.time_rel_noise.value_or(0), 0.1, 1.0);
  if (k.gpu_us_per_call <= timed_us * (1 + slack)) return;
  row.drop_flag(Flag::above_peak);  // judged on the times the events got wrong
  row.drop_flag(Flag::above_bandwidth);
  row.add_flag(Flag::untimed_gpu_work);
  // The GPU time of the call's activities: what the events missed. (Not the span: under CUPTI the
  // host launches slowly, and the gaps between a call's launches stretch it.)
  row.time_ms_median = row.time_ms_p10 = row.time_ms_p90 = k.gpu_us_per_call / 1e3;
  row.time_rel_spread.reset(), row.time_rel_noise.reset();  // a few traced calls: no spread
  row.tflops.reset(), row.pct_of_peak.reset(), row.tb_per_s.reset(), row.pct_of_bandwidth.reset();
  apply_rate(row, setup);
}

}  // namespace

RowSetup row_setup(const std::string& point_id, const Problem& problem, const std::string& backend,
                   const RunOptions& options) {
  RowSetup setup;
  setup.point_id = point_id;
  setup.backend = backend;
  setup.problem = problem;
  setup.run = options.info;
  setup.modes = problem.device == Device::cuda ? options.measurement.timing_modes
                                               : std::vector<TimingMode>{TimingMode::wall};
  if (auto it = options.tolerance.find(problem.dtype); it != options.tolerance.end())
    setup.tolerance = point_tolerance(it->second, problem);
  setup.peak_tflops =
      problem.dtype == DType::fp8_e4m3 ? options.peak_tflops_fp8 : options.peak_tflops;
  setup.bandwidth_gbps = options.bandwidth_gbps;
  setup.keep_samples = options.measurement.keep_samples;
  return setup;
}

BackendRecords assemble_records(const RowSetup& setup, const PassResults& r) {
  BackendRecords out;
  out.point_id = setup.point_id;
  out.backend = setup.backend;
  Row base = base_row(setup);
  base.peak_reserved_mib = r.peak_reserved_mib;
  base.reserved_left_mib = r.reserved_left_mib;
  base.device_mem_left_mib = r.device_mem_left_mib;
  if (r.device_mem_growth) base.device_mem_grown_mib = r.device_mem_growth->mib;
  base.first_call_ms = r.first_call_ms;
  base.feed = r.feed;
  if (kept_device_memory(r) > kLeakedMib ||
      (r.device_mem_growth && grew_with_calls(*r.device_mem_growth)))
    base.add_flag(Flag::leaked_device_memory);
  if (r.fp8_scales) {  // an fp8 KV cache's q is not quantized: no scale of its own
    if (setup.problem.dtype == DType::fp8_e4m3) base.fp8_scale_q = r.fp8_scales->q;
    base.fp8_scale_k = r.fp8_scales->k, base.fp8_scale_v = r.fp8_scales->v;
  }
  if (r.refused) {
    base.status = r.refused->status;
    base.reason = r.refused->reason;
    for (TimingMode mode : setup.modes) {
      out.rows.push_back(base);
      out.rows.back().timing_mode = mode;
    }
    return out;
  }

  if (r.correctness) {
    apply_correctness(base, *r.correctness);
    for (const VariantCheck& v : r.correctness->variants) {
      const double tolerances = base.tolerance && *base.tolerance > 0 ? v.moved / *base.tolerance : 0;
      base.variant_moves += (base.variant_moves.empty() ? "" : ";") + v.name + ":" + three_digits(tolerances);
      if (!(tolerances >= kVariantMovesTolerances) && !base.has_flag(Flag::variant_not_checked))
        base.add_flag(Flag::variant_not_checked);
    }
  }
  base.device_mem_kept_mib = r.device_mem_kept_mib;
  if (r.device_mem_kept_mib && *r.device_mem_kept_mib >= kKeptStateFloorMib &&
      *r.device_mem_kept_mib >= kKeptStateShare * r.kv_cache_mib)
    base.add_flag(Flag::kept_input_sized_state);
  for (const auto& [name, seconds] : r.pass_seconds) {
    char cell[64];
    std::snprintf(cell, sizeof cell, "%s=%.4f", name.c_str(), seconds);
    base.pass_seconds += (base.pass_seconds.empty() ? "" : ";") + std::string(cell);
  }
  if (r.cpu)
    base.cpu_us_median = r.cpu->us.median, base.cpu_us_p10 = r.cpu->us.p10,
    base.cpu_us_p90 = r.cpu->us.p90;
  if (r.cpu) {
    base.host_mhz = r.cpu->host_mhz;
    base.host_preempted_per_call = r.cpu->preempted_per_call;
    base.host_migrated_per_call = r.cpu->migrated_per_call;
  }
  if (r.memory) base.peak_mem_mib = r.memory->peak_extra_mib;
  if (r.energy) {
    base.energy_j_per_call = r.energy->joules_per_call;
    if (r.energy->window_s > 0)
      base.energy_power_w = r.energy->joules_per_call * r.energy->calls / r.energy->window_s;
  }
  if (r.ops) {
    base.aten_ops_per_call = static_cast<int64_t>(r.ops->top_level.size());
    for (const auto& name : r.ops->top_level)
      base.aten_ops += (base.aten_ops.empty() ? "" : " ") + name;
    base.aten_ops_nested_per_call = r.ops->nested;
    base.aten_copies_per_call = r.ops->copies;
  }
  if (r.kernels) {
    base.kernels_per_call = r.kernels->kernels_per_call;
    base.memcpy_per_call = r.kernels->memcpy_per_call;
    base.memset_per_call = r.kernels->memset_per_call;
    base.gpu_us_per_call = r.kernels->gpu_us_per_call;
    base.gpu_span_us_per_call = r.kernels->gpu_span_us_per_call;
    base.kernel_us_per_call = r.kernels->kernel_us_per_call;
    if (!r.kernels->same_every_call) {
      base.add_flag(Flag::kernel_set_varies);
      out.notes = "kernel set differs between calls: " + r.kernels->difference;
    }
    double top_us = -1;  // the kernel with the most GPU time per call gives the occupancy
    for (const KernelStat& k : r.kernels->kernels) {
      const double us = k.launches_per_call * k.duration_us_mean;
      if (k.kind == ActivityKind::kernel && us > top_us)
        top_us = us, base.occupancy_pct = k.theoretical_occupancy_pct;
    }
    for (const KernelStat& stat : r.kernels->kernels) {
      KernelRow k;
      static_cast<KernelStat&>(k) = stat;
      k.point_id = setup.point_id;
      k.backend = setup.backend;
      k.run = setup.run;
      out.kernels.push_back(std::move(k));
    }
  }
  if (r.trace) out.trace = trace_records(*r.trace);
  if (r.failure) {
    base.status = r.failure->status;
    base.reason = r.failure->reason;
  }

  for (TimingMode mode : setup.modes) {
    Row row = base;
    row.timing_mode = mode;
    for (const TimedMode& timed : r.timing) {
      if (timed.mode != mode) continue;
      if (timed.failure && row.status == Status::ok) {
        row.status = timed.failure->status;
        row.reason = timed.failure->reason;
      }
      if (timed.result) {
        apply_timing(row, *timed.result, setup);
        apply_followed(row, *timed.result);
        if (r.kernels) cover_untimed_work(row, *r.kernels, setup);
        if (setup.keep_samples) out.samples.push_back(sample_series(mode, *timed.result));
      }
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace attnbench
