#include "records/assemble.hpp"
#include "kinds/problem.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace attnbench {
namespace {

RowSetup setup(std::vector<TimingMode> modes = {TimingMode::cold, TimingMode::batch}) {
  RowSetup s;
  s.point_id = "b1-h2-s64-d32-bf16-causal-cuda";
  s.backend = "flash";
  s.problem.heads = 2, s.problem.kv_heads = 2, s.problem.seq_len = 64, s.problem.seq_len_kv = 64,
  s.problem.head_dim = 32, s.problem.causal = true;
  s.problem.device = Device::cuda;
  s.run.git_sha = "abc";
  s.modes = std::move(modes);
  s.tolerance = 0.02;
  s.peak_tflops = 1000;
  return s;
}

TimingResult timed(TimingMode mode, double median_ms, bool converged = true) {
  TimingResult t;
  t.mode = mode;
  t.calls_per_sample = mode == TimingMode::cold ? 1 : 40;
  t.summary = summarize({median_ms, median_ms, median_ms});
  t.converged = converged;
  t.samples = {median_ms, median_ms, median_ms};
  return t;
}

TEST(Assemble, ARefusedBackendGetsOneRowPerModeWithTheReasonAndNothingMeasured) {
  PassResults r;
  r.refused = PassFailure{Status::unsupported, "flash attention refused: head_dim 512"};
  r.cpu = CpuResult{summarize({5})};  // ignored: nothing after a refusal counts
  const BackendRecords out = assemble_records(setup(), r);
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[0].timing_mode, TimingMode::cold);
  EXPECT_EQ(out.rows[1].timing_mode, TimingMode::batch);
  for (const Row& row : out.rows) {
    EXPECT_EQ(row.status, Status::unsupported);
    EXPECT_EQ(row.reason, "flash attention refused: head_dim 512");
    EXPECT_EQ(row.point_id, "b1-h2-s64-d32-bf16-causal-cuda");
    EXPECT_EQ(row.run.git_sha, "abc");
    EXPECT_DOUBLE_EQ(*row.gflop, attention_flop(setup().problem) / 1e9);
    EXPECT_EQ(row.tolerance, 0.02);
    EXPECT_FALSE(row.time_ms_median);
    EXPECT_FALSE(row.cpu_us_median);
  }
  EXPECT_TRUE(out.kernels.empty());
}

TEST(Assemble, DerivedMetricsAndFlagsPerMode) {
  PassResults r;
  r.correctness = CorrectnessResult{0.004};
  r.timing.push_back({TimingMode::cold, timed(TimingMode::cold, 0.5, false), std::nullopt});
  const double gflop = attention_flop(setup().problem) / 1e9;
  r.timing.push_back(
      {TimingMode::batch, timed(TimingMode::batch, gflop / 2000), std::nullopt});  // 2000 TFLOP/s
  const BackendRecords out = assemble_records(setup(), r);
  ASSERT_EQ(out.rows.size(), 2u);
  const Row& cold = out.rows[0];
  EXPECT_EQ(cold.status, Status::ok);
  EXPECT_EQ(cold.rel_err, 0.004);
  EXPECT_EQ(cold.time_ms_median, 0.5);
  EXPECT_EQ(cold.samples, 3);
  EXPECT_EQ(cold.calls_per_sample, 1);
  EXPECT_DOUBLE_EQ(*cold.tflops, gflop / 0.5);
  EXPECT_DOUBLE_EQ(*cold.pct_of_peak, 100 * (gflop / 0.5) / 1000);
  EXPECT_EQ(cold.flags, "noise_target_missed");
  const Row& batch = out.rows[1];
  EXPECT_EQ(batch.calls_per_sample, 40);
  EXPECT_NEAR(*batch.pct_of_peak, 200, 1e-9);
  EXPECT_EQ(batch.flags, "above_peak");
  EXPECT_TRUE(out.samples.empty());  // not asked for
}

// The GPU's clock around a timing pass: copied to the row, flagged when it fell by more than 3%.
TEST(Assemble, ClockColumnsAndTheThrottleFlag) {
  PassResults r;
  TimingResult steady = timed(TimingMode::cold, 0.5), falling = timed(TimingMode::batch, 0.5);
  steady.device_start = DeviceState{1980, 300, 40};
  steady.device_end = DeviceState{1925, 420, 45};  // -2.8%: not throttled
  falling.device_start = DeviceState{1980, 420, 45, 1200.5};
  falling.device_end = DeviceState{1710, 600, 52, 1350.5};  // -13.6%, limited for 150 ms
  r.timing.push_back({TimingMode::cold, steady, std::nullopt});
  r.timing.push_back({TimingMode::batch, falling, std::nullopt});
  const BackendRecords out = assemble_records(setup(), r);
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[0].sm_clock_mhz_start, 1980);
  EXPECT_EQ(out.rows[0].sm_clock_mhz_end, 1925);
  EXPECT_EQ(out.rows[0].power_w, 420);
  EXPECT_EQ(out.rows[0].temperature_c, 45);
  EXPECT_EQ(out.rows[0].flags.find("clock_throttled"), std::string::npos);
  EXPECT_EQ(out.rows[1].sm_clock_mhz_end, 1710);
  EXPECT_EQ(out.rows[1].power_w, 600);
  EXPECT_NE(out.rows[1].flags.find("clock_throttled"), std::string::npos) << out.rows[1].flags;
  EXPECT_EQ(out.rows[1].clock_limited_ms, 150);
  EXPECT_FALSE(out.rows[0].clock_limited_ms);  // NVML without violation counters: unknown
  // Without NVML the columns stay empty, never zero.
  PassResults none;
  none.timing.push_back({TimingMode::cold, timed(TimingMode::cold, 0.5), std::nullopt});
  const Row plain = assemble_records(setup({TimingMode::cold}), none).rows.at(0);
  EXPECT_FALSE(plain.sm_clock_mhz_start || plain.sm_clock_mhz_end || plain.power_w ||
               plain.temperature_c || plain.clock_limited_ms);
}

// The power state: each kept sample's clock summarized, burst's drops and rests, the flag when the
// cooldown ran out, and the energy pass's joules in every mode's row.
TEST(Assemble, PowerStateAndEnergyColumns) {
  PassResults r;
  TimingResult burst = timed(TimingMode::cold, 0.5), tired = timed(TimingMode::batch, 0.5);
  burst.power = tired.power = PowerMode::burst;
  burst.sample_clock_mhz = {1980, 1965, 1980, 1950, 1980};
  burst.dropped_for_clock = 3, burst.rested_s = 0.35;
  tired.sample_clock_mhz = {1620, 1515};
  tired.dropped_for_clock = 9, tired.rested_s = 30, tired.clock_recovered = false;
  r.timing.push_back({TimingMode::cold, burst, std::nullopt});
  r.timing.push_back({TimingMode::batch, tired, std::nullopt});
  r.energy = EnergyReading{1.25, 0.31, 248};
  const BackendRecords out = assemble_records(setup(), r);
  ASSERT_EQ(out.rows.size(), 2u);
  const Row& cold = out.rows[0];
  EXPECT_EQ(cold.power_mode, PowerMode::burst);
  EXPECT_EQ(cold.sm_clock_mhz_median, 1980);
  EXPECT_EQ(cold.sm_clock_mhz_min, 1950);
  EXPECT_EQ(cold.clock_dropped_samples, 3);
  EXPECT_DOUBLE_EQ(*cold.cooldown_s, 0.35);
  EXPECT_FALSE(cold.has_flag(Flag::clock_not_recovered));
  const Row& batch = out.rows[1];
  EXPECT_EQ(batch.sm_clock_mhz_min, 1515);
  EXPECT_TRUE(batch.has_flag(Flag::clock_not_recovered)) << batch.flags;
  for (const Row& row : out.rows) {
    EXPECT_EQ(row.energy_j_per_call, 1.25);
    EXPECT_DOUBLE_EQ(*row.energy_power_w, 1.25 * 248 / 0.31);
  }
  // A heavy call whose rested samples set a lower bar says so, apart from a cooldown that ran out.
  burst.rested_clock_mhz = 1850;
  PassResults bar;
  bar.timing.push_back({TimingMode::cold, burst, std::nullopt});
  const Row held = assemble_records(setup(), bar).rows[0];
  EXPECT_TRUE(held.has_flag(Flag::clock_held_by_call)) << held.flags;
  EXPECT_FALSE(held.has_flag(Flag::clock_not_recovered)) << held.flags;
  EXPECT_FALSE(batch.has_flag(Flag::clock_held_by_call)) << batch.flags;
  // Sustained: no burst columns; without NVML no clock columns and no energy.
  PassResults plain;
  plain.timing.push_back({TimingMode::cold, timed(TimingMode::cold, 0.5), std::nullopt});
  const Row row = assemble_records(setup({TimingMode::cold}), plain).rows.at(0);
  EXPECT_EQ(row.power_mode, PowerMode::sustained);
  EXPECT_FALSE(row.clock_dropped_samples || row.cooldown_s || row.sm_clock_mhz_median ||
               row.energy_j_per_call);
}

TEST(Assemble, NoPeakNoPercentage) {
  RowSetup s = setup({TimingMode::cold});
  s.peak_tflops.reset();
  PassResults r;
  r.timing.push_back({TimingMode::cold, timed(TimingMode::cold, 0.5), std::nullopt});
  const Row row = assemble_records(s, r).rows.at(0);
  EXPECT_TRUE(row.tflops);
  EXPECT_FALSE(row.pct_of_peak);
  EXPECT_EQ(row.flags, "");
}

TEST(Assemble, WrongAboveTheToleranceOrNotFiniteButStillTimed) {
  PassResults r;
  r.correctness = CorrectnessResult{0.05};
  r.timing.push_back({TimingMode::cold, timed(TimingMode::cold, 0.5), std::nullopt});
  const BackendRecords above = assemble_records(setup({TimingMode::cold}), r);
  EXPECT_EQ(above.rows[0].status, Status::wrong);
  EXPECT_EQ(above.rows[0].reason, "max row relative error 0.05 above the bf16 tolerance 0.02");
  EXPECT_EQ(above.rows[0].time_ms_median, 0.5);
  r.correctness = CorrectnessResult{std::numeric_limits<double>::quiet_NaN()};
  const BackendRecords nan = assemble_records(setup({TimingMode::cold}), r);
  EXPECT_EQ(nan.rows[0].status, Status::wrong);
  EXPECT_EQ(nan.rows[0].reason.rfind(
                "the output has non-finite values (computed, or left unwritten", 0),
            0u)
      << nan.rows[0].reason;
  r.correctness = CorrectnessResult{0.02};  // at the tolerance: fine
  EXPECT_EQ(assemble_records(setup({TimingMode::cold}), r).rows[0].status, Status::ok);
  RowSetup no_limit = setup({TimingMode::cold});
  no_limit.tolerance.reset();
  r.correctness = CorrectnessResult{0.5};
  EXPECT_EQ(assemble_records(no_limit, r).rows[0].status, Status::ok);
}

TEST(Assemble, AFailedPassMarksEveryRowAndAFailedModeOnlyItsOwn) {
  PassResults r;
  r.timing.push_back(
      {TimingMode::cold, std::nullopt, PassFailure{Status::error, "cold: capture failed"}});
  r.timing.push_back({TimingMode::batch, timed(TimingMode::batch, 0.5), std::nullopt});
  const BackendRecords modes = assemble_records(setup(), r);
  EXPECT_EQ(modes.rows[0].status, Status::error);
  EXPECT_EQ(modes.rows[0].reason, "cold: capture failed");
  EXPECT_FALSE(modes.rows[0].time_ms_median);
  EXPECT_EQ(modes.rows[1].status, Status::ok);
  EXPECT_EQ(modes.rows[1].time_ms_median, 0.5);

  r.correctness = CorrectnessResult{0.5};  // wrong ...
  r.failure = PassFailure{Status::oom,
                          "memory: CUDA out of memory"};  // ... then a later pass ran out of memory
  const BackendRecords failed = assemble_records(setup(), r);
  for (const Row& row : failed.rows) {
    EXPECT_EQ(row.status,
              Status::oom);  // the failure wins over wrong and over the mode's own error
    EXPECT_EQ(row.reason, "memory: CUDA out of memory");
  }
  EXPECT_EQ(failed.rows[1].time_ms_median, 0.5);  // what was measured before stays
}

TEST(Assemble, HostTimeMemoryOpsAndKernelsFillEveryRow) {
  PassResults r;
  r.cpu = CpuResult{summarize({10, 20, 30})};
  r.memory = MemoryResult{12.5};
  r.ops = OpCounts{{"matmul", "mul", "masked_fill", "softmax", "matmul"}, 40, 1};
  KernelsResult k;
  k.kernels_per_call = 5, k.memcpy_per_call = 1, k.memset_per_call = 2;
  k.kernels.push_back(KernelRow{});
  k.kernels.back().name = "gemm";
  k.same_every_call = false;
  k.difference = "call 1: 5 kernels; call 2: 6 kernels";
  r.kernels = k;
  const BackendRecords out = assemble_records(setup(), r);
  for (const Row& row : out.rows) {
    EXPECT_EQ(row.cpu_us_median, 20);
    EXPECT_EQ(row.cpu_us_p10, 12);
    EXPECT_EQ(row.cpu_us_p90, 28);
    EXPECT_EQ(row.peak_mem_mib, 12.5);
    EXPECT_EQ(row.aten_ops_per_call, 5);
    EXPECT_EQ(row.aten_ops, "matmul mul masked_fill softmax matmul");
    EXPECT_EQ(row.aten_ops_nested_per_call, 40);
    EXPECT_EQ(row.aten_copies_per_call, 1);
    EXPECT_EQ(row.kernels_per_call, 5);
    EXPECT_EQ(row.memcpy_per_call, 1);
    EXPECT_EQ(row.memset_per_call, 2);
    EXPECT_EQ(row.flags, "kernel_set_varies");
  }
  ASSERT_EQ(out.kernels.size(), 1u);  // once per (point, backend), not per mode
  EXPECT_EQ(out.kernels[0].point_id, "b1-h2-s64-d32-bf16-causal-cuda");
  EXPECT_EQ(out.kernels[0].backend, "flash");
  EXPECT_EQ(out.kernels[0].run.git_sha, "abc");
  EXPECT_EQ(out.notes, "kernel set differs between calls: call 1: 5 kernels; call 2: 6 kernels");
}

TEST(Assemble, RawSamplesOnRequestPerTimedMode) {
  RowSetup s = setup({TimingMode::cold, TimingMode::batch, TimingMode::graph});
  s.keep_samples = true;
  PassResults r;
  TimingResult cold = timed(TimingMode::cold, 0.5);
  cold.sample_clock_mhz = {1980, 1965, 1972.5};
  TimingResult graph = timed(TimingMode::graph, 0.4);
  graph.sample_clock_mhz = {1980};  // not one per sample: left out rather than misaligned
  r.timing.push_back({TimingMode::cold, cold, std::nullopt});
  r.timing.push_back(
      {TimingMode::batch, std::nullopt, PassFailure{Status::error, "batch: failed"}});
  r.timing.push_back({TimingMode::graph, graph, std::nullopt});
  const BackendRecords out = assemble_records(s, r);
  ASSERT_EQ(out.samples.size(), 2u);
  EXPECT_EQ(out.samples[0].mode, TimingMode::cold);
  EXPECT_EQ(out.samples[0].time_ms, (std::vector<double>{0.5, 0.5, 0.5}));
  EXPECT_EQ(out.samples[0].sm_clock_mhz, (std::vector<double>{1980, 1965, 1972.5}));
  EXPECT_EQ(out.samples[1].time_ms, (std::vector<double>{0.4, 0.4, 0.4}));
  EXPECT_TRUE(out.samples[1].sm_clock_mhz.empty());
  EXPECT_EQ(out.point_id, s.point_id);
  EXPECT_EQ(out.backend, "flash");
}

TEST(Tolerance, GrowsWithHeadDimAndKeysAndNeverFallsBelowTheBase) {
  Problem p;
  p.head_dim = 64, p.seq_len = p.seq_len_kv = 1024;
  EXPECT_DOUBLE_EQ(scaled_tolerance(0.02, p), 0.02);
  p.head_dim = 256;
  EXPECT_DOUBLE_EQ(scaled_tolerance(0.02, p), 0.04);
  p.head_dim = 16, p.seq_len_kv = 16;  // small problems keep the base
  EXPECT_DOUBLE_EQ(scaled_tolerance(0.02, p), 0.02);
  p.head_dim = 64, p.seq_len_kv = 131072;  // 2^7 times the keys: 7/16 more
  EXPECT_DOUBLE_EQ(scaled_tolerance(0.02, p), 0.02 * (1 + 7.0 / 16));
  // The row says which limit it was judged against.
  RowSetup setup;
  setup.problem = p;
  setup.modes = {TimingMode::wall};
  setup.tolerance = scaled_tolerance(0.02, p);
  PassResults r;
  r.correctness = CorrectnessResult{0.025, "out"};
  const BackendRecords out = assemble_records(setup, r);
  EXPECT_EQ(out.rows.at(0).status, Status::ok);
  EXPECT_DOUBLE_EQ(*out.rows.at(0).tolerance, 0.02 * (1 + 7.0 / 16));
}

// A backend whose work runs on a stream of its own: the events saw 1.3 us per call, CUPTI 120 us.
// The row is flagged and takes the kernels pass's GPU time; an honest row is left alone.
TEST(UntimedWork, CuptiTimeBeyondTheTimedTimeFlagsTheRowAndReplacesItsTimes) {
  RowSetup setup;
  setup.problem.device = Device::cuda;
  setup.problem.batch = setup.problem.heads = 1, setup.problem.seq_len = 1024;
  setup.problem.seq_len_kv = 1024, setup.problem.head_dim = 64;
  setup.modes = {TimingMode::cold};
  PassResults r;
  TimingResult t;
  t.mode = TimingMode::cold;
  t.summary.median = 0.0013, t.summary.p10 = 0.0012, t.summary.p90 = 0.0014;
  t.summary.rel_noise = 0.02, t.summary.count = 20, t.converged = true;
  r.timing.push_back({TimingMode::cold, t, std::nullopt});
  KernelsResult k;
  k.kernels_per_call = 1, k.gpu_us_per_call = 120;
  k.gpu_span_us_per_call = 125;
  r.kernels = k;
  const Row fooled = assemble_records(setup, r).rows.at(0);
  EXPECT_NE(fooled.flags.find("untimed_gpu_work"), std::string::npos) << fooled.flags;
  EXPECT_DOUBLE_EQ(*fooled.time_ms_median, 0.12);
  EXPECT_DOUBLE_EQ(*fooled.time_ms_p10, 0.12);
  EXPECT_DOUBLE_EQ(*fooled.gpu_us_per_call, 120);
  EXPECT_DOUBLE_EQ(*fooled.tflops, *fooled.gflop / 0.12);
  // Timed 0.13 ms for 120 us of kernels (launch gaps, event overhead): honest, not flagged.
  r.timing[0].result->summary.median = 0.13;
  const Row honest = assemble_records(setup, r).rows.at(0);
  EXPECT_EQ(honest.flags.find("untimed_gpu_work"), std::string::npos) << honest.flags;
  EXPECT_DOUBLE_EQ(*honest.time_ms_median, 0.13);
  // Batched calls piling up on the side stream: wildly noisy samples do not excuse 10x.
  r.timing[0].result->summary.median = 0.09, r.timing[0].result->summary.rel_noise = 5;
  r.kernels->gpu_us_per_call = 1024;
  EXPECT_NE(assemble_records(setup, r).rows.at(0).flags.find("untimed_gpu_work"),
            std::string::npos);
}

// What stayed reserved after a (point, backend) and the first call's wall time are every row's,
// refused or not; over 1 GiB left is a leak, which retires the worker.
TEST(Assemble, MemoryLeftBehindAndTheFirstCall) {
  PassResults r;
  r.first_call_ms = 1234.5;
  r.reserved_left_mib = 8194;
  r.timing.push_back({TimingMode::cold, timed(TimingMode::cold, 0.5), std::nullopt});
  const BackendRecords leaked = assemble_records(setup(), r);
  for (const Row& row : leaked.rows) {
    EXPECT_EQ(*row.first_call_ms, 1234.5);
    EXPECT_EQ(*row.reserved_left_mib, 8194);
    EXPECT_TRUE(row.has_flag(Flag::leaked_device_memory)) << row.flags;
  }
  EXPECT_TRUE(leaked_device_memory(leaked));
  r.reserved_left_mib = 514;  // the most training.yaml left on the H200: not a leak
  const BackendRecords kept = assemble_records(setup(), r);
  EXPECT_FALSE(kept.rows[0].has_flag(Flag::leaked_device_memory));
  EXPECT_FALSE(leaked_device_memory(kept));
  PassResults refused;
  refused.refused = PassFailure{Status::error, "first call: boom"};
  refused.reserved_left_mib = 2048;
  EXPECT_TRUE(leaked_device_memory(assemble_records(setup(), refused)));
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// The untimed-work rule on both sides of each of its bounds: the kernels' GPU time may exceed the
// timed median by three robust standard deviations of the timing, never by less than 10% and
// never by more than 100%.
TEST(UntimedWork, TheAllowanceIsThreeNoisesBetweenTenAndOneHundredPercent) {
  RowSetup s = setup({TimingMode::cold});
  auto flagged = [&](double timed_ms, double noise, double gpu_us) {
    PassResults r;
    TimingResult t = timed(TimingMode::cold, timed_ms);
    t.summary.rel_noise = noise;
    r.timing.push_back({TimingMode::cold, t, std::nullopt});
    KernelsResult k;
    k.kernels_per_call = 1, k.gpu_us_per_call = gpu_us;
    r.kernels = k;
    return assemble_records(s, r).rows.at(0).has_flag(Flag::untimed_gpu_work);
  };
  // No noise: 10% allowed. 110 us of kernels against 100 us timed is honest, 111 is not.
  EXPECT_FALSE(flagged(0.100, 0, 110));
  EXPECT_TRUE(flagged(0.100, 0, 111));
  // 3% noise is still under the floor: 3 x 3% = 9% < 10%.
  EXPECT_FALSE(flagged(0.100, 0.03, 110));
  EXPECT_TRUE(flagged(0.100, 0.03, 111));
  // 10% noise: 30% allowed.
  EXPECT_FALSE(flagged(0.100, 0.10, 129.9));
  EXPECT_TRUE(flagged(0.100, 0.10, 130.1));
  // 50% noise would allow 150%: capped at 100%.
  EXPECT_FALSE(flagged(0.100, 0.50, 199.9));
  EXPECT_TRUE(flagged(0.100, 0.50, 200.1));
  // The events' median in ms, the kernels' time in us: 1 ms timed is 1000 us.
  EXPECT_FALSE(flagged(1.0, 0, 1099));
  EXPECT_TRUE(flagged(1.0, 0, 1101));
  // CPU rows are never judged (wall time has no CUPTI behind it), nor a row without GPU time.
  RowSetup cpu = setup({TimingMode::wall});
  cpu.problem.device = Device::cpu;
  PassResults r;
  r.timing.push_back({TimingMode::wall, timed(TimingMode::wall, 0.1), std::nullopt});
  KernelsResult k;
  k.gpu_us_per_call = 5000;
  r.kernels = k;
  EXPECT_FALSE(assemble_records(cpu, r).rows.at(0).has_flag(Flag::untimed_gpu_work));
  EXPECT_FALSE(flagged(0.1, 0, 0));
}

// A row that was flagged above_peak on the fooled time loses that flag with the fooled time, and
// gets the rate of the kernels' time.
TEST(UntimedWork, TheReplacedTimeSetsTheRateAndThePeakFlagAnew) {
  RowSetup s = setup({TimingMode::cold});
  const double gflop = attention_flop(s.problem) / 1e9;
  PassResults r;
  r.timing.push_back({TimingMode::cold, timed(TimingMode::cold, gflop / 5000), std::nullopt});
  KernelsResult k;
  k.gpu_us_per_call = 1e3 * gflop / 500;  // 500 TFLOP/s: half the peak of 1000
  r.kernels = k;
  const Row row = assemble_records(s, r).rows.at(0);
  EXPECT_TRUE(row.has_flag(Flag::untimed_gpu_work));
  EXPECT_FALSE(row.has_flag(Flag::above_peak)) << row.flags;
  EXPECT_NEAR(*row.tflops, 500, 1e-9);
  EXPECT_NEAR(*row.pct_of_peak, 50, 1e-9);
  EXPECT_FALSE(row.time_rel_noise);
  EXPECT_FALSE(row.time_rel_spread);
}

// Leaks: more than 1024 MiB left reserved, not 1024 itself; the flag is what retires a worker.
TEST(Assemble, TheLeakBoundIsOneGibibyteExclusive) {
  auto leaked = [](double left) {
    PassResults r;
    r.reserved_left_mib = left;
    r.timing.push_back({TimingMode::cold, timed(TimingMode::cold, 0.5), std::nullopt});
    return leaked_device_memory(assemble_records(setup(), r));
  };
  EXPECT_FALSE(leaked(1024));
  EXPECT_TRUE(leaked(1024.5));
  EXPECT_FALSE(leaked(0));
  PassResults none;  // a CPU point measures no reserved memory: never a leak
  none.timing.push_back({TimingMode::cold, timed(TimingMode::cold, 0.5), std::nullopt});
  EXPECT_FALSE(leaked_device_memory(assemble_records(setup(), none)));
  EXPECT_FALSE(leaked_device_memory(BackendRecords{}));
}

// Memory taken call after call is a leak at any size: from 16 MiB over the CPU pass and half a
// MiB a call; what a first call loaded is not (it came before), nor a page's worth of noise.
TEST(Assemble, MemoryThatGrowsWithTheCallsIsALeak) {
  auto leaked = [](double mib, int64_t calls) {
    PassResults r;
    r.device_mem_growth = MemoryGrowth{mib, calls};
    r.timing.push_back({TimingMode::cold, timed(TimingMode::cold, 0.5), std::nullopt});
    const BackendRecords records = assemble_records(setup(), r);
    EXPECT_EQ(*records.rows.at(0).device_mem_grown_mib, mib);
    return leaked_device_memory(records);
  };
  EXPECT_TRUE(leaked(80, 20));   // the probe: 4 MiB of cudaMalloc a call
  EXPECT_TRUE(leaked(16, 5));    // the same over five calls
  EXPECT_FALSE(leaked(15.9, 5));
  EXPECT_TRUE(leaked(100, 200));   // half a MiB a call
  EXPECT_FALSE(leaked(99, 200));   // less, over many calls: a one-time growth
  EXPECT_FALSE(leaked(2, 20));     // one page
  EXPECT_FALSE(leaked(-500, 20));  // another process freed memory
  EXPECT_FALSE(leaked(64, 0));     // no call made
}

// A mode whose last timed output is off the inputs moved before its sample is wrong in that
// mode only, saying so; within the tolerance, or where the check did not run, nothing changes.
TEST(Assemble, TimedCallsThatDoNotFollowTheirInputsAreWrongInTheirMode) {
  PassResults r;
  r.correctness = CorrectnessResult{0.001, "out", 0.001};
  TimingResult graph = timed(TimingMode::graph, 0.5), cold = timed(TimingMode::cold, 0.6);
  graph.followed_rel_err = 0.9;
  cold.followed_rel_err = 0.002;
  r.timing.push_back({TimingMode::cold, cold, std::nullopt});
  r.timing.push_back({TimingMode::graph, graph, std::nullopt});
  RowSetup s = setup();
  s.modes = {TimingMode::cold, TimingMode::graph};
  s.tolerance = 0.03;
  const BackendRecords out = assemble_records(s, r);
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[0].status, Status::ok) << out.rows[0].reason;
  EXPECT_EQ(out.rows[1].status, Status::wrong);
  EXPECT_NE(out.rows[1].reason.find("did not follow their inputs"), std::string::npos);
  EXPECT_NE(out.rows[1].reason.find("graph output is off their reference by 0.9"),
            std::string::npos)
      << out.rows[1].reason;
  r.timing[1].result->followed_rel_err = 0.06;  // twice the tolerance is within (kFollowsSlack)
  EXPECT_EQ(assemble_records(s, r).rows[1].status, Status::ok);
  r.timing[1].result->followed_rel_err = 0.0601;
  EXPECT_EQ(assemble_records(s, r).rows[1].status, Status::wrong);
  r.timing[1].result->followed_rel_err = std::nullopt;  // a backward point: not checked
  EXPECT_EQ(assemble_records(s, r).rows[1].status, Status::ok);
}

// A leak is judged on the (point, backend)'s own difference: what the allocator held before it
// (an earlier backend's leftovers, under the bound) is not its; memory gone from the device
// outside the allocator (a library's cudaMalloc) is, over the same bound.
TEST(Assemble, ALeakIsWhatThisPointAndBackendKept) {
  auto row = [](std::optional<double> before, std::optional<double> left,
                std::optional<double> device_left) {
    PassResults r;
    r.reserved_before_mib = before;
    r.reserved_left_mib = left;
    r.device_mem_left_mib = device_left;
    r.timing.push_back({TimingMode::cold, timed(TimingMode::cold, 0.5), std::nullopt});
    return assemble_records(setup(), r);
  };
  EXPECT_FALSE(leaked_device_memory(row(900, 1800, 0)));  // 900 MiB of its own
  EXPECT_TRUE(leaked_device_memory(row(900, 1925, 0)));   // 1025 of its own
  EXPECT_FALSE(leaked_device_memory(row(1000, 1000, 0)));  // an earlier one's, unchanged
  EXPECT_TRUE(leaked_device_memory(row(0, 16, 1024.5)));   // outside the allocator
  EXPECT_FALSE(leaked_device_memory(row(0, 16, 1024)));
  EXPECT_FALSE(leaked_device_memory(row(0, 16, -3000)));  // another process freed memory
  const BackendRecords records = row(100, 116, 40);
  EXPECT_EQ(*records.rows[0].device_mem_left_mib, 40);
  EXPECT_EQ(*records.rows[0].reserved_left_mib, 116);
  EXPECT_FALSE(row(0, 16, std::nullopt).rows[0].device_mem_left_mib);
}

// The clock flag: a fall of more than 3% between the start and the end of the timing pass.
TEST(Assemble, TheThrottleBoundIsThreePercentOfTheStartClock) {
  auto throttled = [](double start, double end) {
    PassResults r;
    TimingResult t = timed(TimingMode::cold, 0.5);
    t.device_start = DeviceState{start, 300, 40};
    t.device_end = DeviceState{end, 300, 40};
    r.timing.push_back({TimingMode::cold, t, std::nullopt});
    return assemble_records(setup({TimingMode::cold}), r).rows.at(0).has_flag(
        Flag::clock_throttled);
  };
  EXPECT_FALSE(throttled(2000, 1941));  // -2.95%
  EXPECT_TRUE(throttled(2000, 1939));   // -3.05%
  EXPECT_FALSE(throttled(1500, 2000));  // a rising clock is not throttling
}

// above_peak is over 100% of the peak, not at it; the rate is GFLOP per ms.
TEST(Assemble, AbovePeakIsBeyondOneHundredPercent) {
  RowSetup s = setup({TimingMode::cold});
  const double gflop = attention_flop(s.problem) / 1e9;
  auto row_at = [&](double tflops) {
    PassResults r;
    r.timing.push_back({TimingMode::cold, timed(TimingMode::cold, gflop / tflops), std::nullopt});
    return assemble_records(s, r).rows.at(0);
  };
  EXPECT_FALSE(row_at(999).has_flag(Flag::above_peak));
  EXPECT_TRUE(row_at(1001).has_flag(Flag::above_peak));
  EXPECT_NEAR(*row_at(250).tflops, 250, 1e-9);
  EXPECT_NEAR(*row_at(250).pct_of_peak, 25, 1e-9);
  // fp8 rows are judged against the fp8 peak (row_setup picks it).
  RunOptions options;
  options.peak_tflops = 1000, options.peak_tflops_fp8 = 2000;
  Problem p = s.problem;
  p.dtype = DType::fp8_e4m3;
  EXPECT_EQ(row_setup("x", p, "fa3", options).peak_tflops, 2000);
  p.dtype = DType::bf16;
  EXPECT_EQ(row_setup("x", p, "fa3", options).peak_tflops, 1000);
}

// The fresh-inputs check: a call after the inputs changed must stay within twice the tolerance
// (kFollowsSlack: an honest backend's rounding on new inputs, not a stale output's error near 1);
// at the bound is fine, above it is `wrong` saying the output does not follow the inputs.
TEST(Assemble, TheFreshInputsCheckUsesTwiceTheTolerance) {
  auto status_of = [](double fresh) {
    PassResults r;
    r.correctness = CorrectnessResult{0.001, "out", fresh};
    r.timing.push_back({TimingMode::cold, timed(TimingMode::cold, 0.5), std::nullopt});
    return assemble_records(setup({TimingMode::cold}), r).rows.at(0);
  };
  EXPECT_EQ(status_of(0.0267).status, Status::ok);  // naive's worst seen on new inputs
  EXPECT_EQ(status_of(0.04).status, Status::ok);
  const Row stale = status_of(0.0401);
  EXPECT_EQ(stale.status, Status::wrong);
  EXPECT_NE(stale.reason.find("the output does not follow the inputs"), std::string::npos);
  EXPECT_NE(stale.reason.find("0.0401"), std::string::npos) << stale.reason;
  EXPECT_EQ(status_of(std::numeric_limits<double>::quiet_NaN()).status, Status::wrong);
}

// The whole output's worst row (every row against float32) is held against twice the tolerance:
// the worst of many rows lies further out in rounding than the drawn rows' float64 check; work left
// undone (an error near 1) still fails, and says which check it failed.
TEST(Assemble, TheWholeOutputIsJudgedAgainstTwiceTheTolerance) {
  auto row_of = [](double whole) {
    PassResults r;
    r.correctness = CorrectnessResult{0.015, "out", std::nullopt, "", whole};
    r.timing.push_back({TimingMode::cold, timed(TimingMode::cold, 0.5), std::nullopt});
    return assemble_records(setup({TimingMode::cold}), r).rows.at(0);
  };
  const Row rounding = row_of(0.039);  // tolerance 0.02
  EXPECT_EQ(rounding.status, Status::ok) << rounding.reason;
  EXPECT_EQ(rounding.rel_err, 0.015);  // the float64 check's number
  const Row undone = row_of(1.0);
  EXPECT_EQ(undone.status, Status::wrong);
  EXPECT_EQ(undone.reason,
            "max row relative error of the whole output 1 (every row against float32) above 2x "
            "the bf16 tolerance 0.02: rows, heads or sequences computed wrong or not at all?");
  EXPECT_EQ(row_of(0.0401).status, Status::wrong);
}

// The first call's wall time is copied as measured, in ms, to every row, a refused one too.
TEST(Assemble, FirstCallMillisecondsReachEveryRowUnchanged) {
  PassResults r;
  r.first_call_ms = 0.75;
  r.refused = PassFailure{Status::unsupported, "no"};
  for (const Row& row : assemble_records(setup(), r).rows) EXPECT_EQ(row.first_call_ms, 0.75);
}

}  // namespace
}  // namespace attnbench

namespace attnbench {
namespace {

// above_bandwidth and untimed work: a row whose timed time the events got wrong (work on a stream
// of its own) is judged on the kernels' time instead, so the bandwidth flag the fooled time earned
// goes with it and pct_of_bandwidth is the kernels' time's; a kernels' time still past the
// bandwidth keeps the flag (once); an honest row above the bandwidth keeps its flag and numbers.
TEST(UntimedWork, TheReplacedTimeSetsTheBandwidthAndItsFlagAnew) {
  RowSetup s = setup({TimingMode::cold});
  s.peak_tflops.reset();  // the bandwidth alone
  s.bandwidth_gbps = 3000;
  auto assembled = [&](double timed_ms, double gpu_us) {
    PassResults r;
    r.timing.push_back({TimingMode::cold, timed(TimingMode::cold, timed_ms), std::nullopt});
    KernelsResult k;
    k.kernels_per_call = 1, k.gpu_us_per_call = gpu_us;
    r.kernels = k;
    return assemble_records(s, r).rows.at(0);
  };
  const double gbytes = *assembled(1, 1).gbytes;
  ASSERT_GT(gbytes, 0);
  // At half the bandwidth a call takes 2 x gbytes / 3000 GB/s; the events saw a tenth of it.
  const double half_ms = 2 * gbytes / 3000 * 1e3;
  const Row fooled = assembled(half_ms / 10, half_ms * 1e3);
  EXPECT_TRUE(fooled.has_flag(Flag::untimed_gpu_work)) << fooled.flags;
  EXPECT_FALSE(fooled.has_flag(Flag::above_bandwidth)) << fooled.flags;
  EXPECT_NEAR(*fooled.pct_of_bandwidth, 50, 1e-9);
  EXPECT_NEAR(*fooled.tb_per_s, 1.5, 1e-12);  // 3000 GB/s halved, in TB/s
  // Twice the bandwidth even at the kernels' time: flagged on that time, once.
  const double double_ms = half_ms / 4;
  const Row still = assembled(double_ms / 10, double_ms * 1e3);
  EXPECT_TRUE(still.has_flag(Flag::untimed_gpu_work)) << still.flags;
  EXPECT_TRUE(still.has_flag(Flag::above_bandwidth)) << still.flags;
  EXPECT_EQ(still.flags.find("above_bandwidth"), still.flags.rfind("above_bandwidth")) << still.flags;
  EXPECT_NEAR(*still.pct_of_bandwidth, 200, 1e-9);
  // Honest (the kernels take what the events saw) and above the bandwidth: left as it was.
  const Row honest = assembled(double_ms, double_ms * 1e3);
  EXPECT_FALSE(honest.has_flag(Flag::untimed_gpu_work)) << honest.flags;
  EXPECT_TRUE(honest.has_flag(Flag::above_bandwidth)) << honest.flags;
  EXPECT_NEAR(*honest.pct_of_bandwidth, 200, 1e-9);
}

}  // namespace
}  // namespace attnbench
