#include "isolate/protocol.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace attnbench {
namespace {

BackendRecords sample_records() {
  BackendRecords b;
  b.point_id = "b4-h16-s1024-d64-bf16-causal-cuda";
  b.backend = "flash";
  Row r;
  r.point_id = b.point_id;
  r.backend = "flash";
  r.problem.batch = 4, r.problem.heads = 16, r.problem.seq_len = 1024, r.problem.head_dim = 64;
  r.problem.kv_heads = 4, r.problem.seq_len_kv = 4096, r.problem.direction = Direction::bwd;
  r.problem.causal = true, r.problem.device = Device::cuda, r.problem.dtype = DType::f16;
  r.timing_mode = TimingMode::graph;
  r.sm_clock_mhz_start = 1980, r.sm_clock_mhz_end = 1710, r.power_w = 601.5, r.temperature_c = 52;
  r.status = Status::wrong;
  r.reason = "max row relative error 0.05 above \"the\" tolerance,\nsecond line";
  r.time_ms_median = 1.0 / 3.0;
  r.samples = 9007199254740993;  // 2^53 + 1
  r.aten_ops = "scaled_dot_product_attention";
  r.flags = "noise_target_missed;above_peak";
  r.run = {"NVIDIA H200",       "2.11.0",          "abc", "2026-12-02T22:00:00Z",
           "configs/seed.yaml", "0123456789abcdef"};
  b.rows = {r, r};
  b.rows[1].timing_mode = TimingMode::cold;
  b.rows[1].time_ms_median.reset();
  KernelRow k;
  k.point_id = b.point_id, k.backend = "flash", k.kind = ActivityKind::memset, k.name = "memset";
  k.launches_per_call = 2.0 / 3.0, k.duration_us_mean = 1e-7, k.bytes = 4, k.run = r.run;
  b.kernels = {k};
  b.samples = {{TimingMode::graph, {0.1, 0.2, 1e-300}, {1980, 1972.5, 1500}}};
  b.notes = "kernel set differs";
  b.rows[0].occupancy_pct = 12.5;
  Trace trace;
  trace.calls = 3;
  trace.host_tracks = {{0, "calling thread"}, {1009, "CUDA API, thread 9"}};
  trace.events = {
      {"flash_fwd", "kernel", TraceLane::gpu, 7, 1.5, 1.0 / 3.0, 42, {{"grid", "1,2,3"}}}};
  b.trace = trace;
  return b;
}

TEST(Protocol, RecordsSurviveTheTripExactly) {
  const BackendRecords b = sample_records();
  const Message m = parse_message(records_message(b));
  ASSERT_EQ(m.type, "records");
  const BackendRecords& c = m.records;
  ASSERT_EQ(c.rows.size(), 2u);
  const Row& r = c.rows[0];
  EXPECT_EQ(r.problem.batch, 4);
  EXPECT_EQ(r.problem.dtype, DType::f16);
  EXPECT_EQ(r.problem.device, Device::cuda);
  EXPECT_TRUE(r.problem.causal);
  EXPECT_EQ(r.problem.kv_heads, 4);
  EXPECT_EQ(r.problem.seq_len_kv, 4096);
  EXPECT_EQ(r.problem.direction, Direction::bwd);
  EXPECT_EQ(r.timing_mode, TimingMode::graph);
  EXPECT_EQ(r.sm_clock_mhz_start, 1980);
  EXPECT_EQ(r.sm_clock_mhz_end, 1710);
  EXPECT_EQ(r.power_w, 601.5);
  EXPECT_EQ(r.temperature_c, 52);
  EXPECT_EQ(r.status, Status::wrong);
  EXPECT_EQ(r.reason, b.rows[0].reason);
  EXPECT_EQ(r.time_ms_median, 1.0 / 3.0);  // bit for bit
  EXPECT_EQ(r.samples, 9007199254740993);
  EXPECT_FALSE(r.cpu_us_median);
  EXPECT_FALSE(c.rows[1].time_ms_median);
  EXPECT_EQ(c.rows[1].timing_mode, TimingMode::cold);
  EXPECT_EQ(r.flags, b.rows[0].flags);
  EXPECT_EQ(r.run.config_fingerprint, "0123456789abcdef");
  EXPECT_EQ(r.run.device_name, "NVIDIA H200");
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.kernels[0].kind, ActivityKind::memset);
  EXPECT_EQ(c.kernels[0].launches_per_call, 2.0 / 3.0);
  EXPECT_EQ(c.kernels[0].bytes, 4);
  EXPECT_FALSE(c.kernels[0].registers_per_thread);
  ASSERT_EQ(c.samples.size(), 1u);
  EXPECT_EQ(c.samples[0].mode, TimingMode::graph);
  EXPECT_EQ(c.samples[0].time_ms, (std::vector<double>{0.1, 0.2, 1e-300}));
  EXPECT_EQ(c.samples[0].sm_clock_mhz, (std::vector<double>{1980, 1972.5, 1500}));
  EXPECT_EQ(c.notes, "kernel set differs");
  EXPECT_EQ(r.occupancy_pct, 12.5);
  ASSERT_TRUE(c.trace);
  EXPECT_EQ(c.trace->calls, 3);
  EXPECT_EQ(c.trace->host_tracks, b.trace->host_tracks);
  ASSERT_EQ(c.trace->events.size(), 1u);
  const TraceEvent& e = c.trace->events[0];
  EXPECT_EQ(e.lane, TraceLane::gpu);
  EXPECT_EQ(e.track, 7u);
  EXPECT_EQ(e.duration_us, 1.0 / 3.0);
  EXPECT_EQ(e.flow, 42u);
  EXPECT_EQ(e.args, b.trace->events[0].args);
  EXPECT_FALSE(parse_message(records_message(BackendRecords{})).records.trace);
}

TEST(Protocol, SetupCarriesEveryOption) {
  RunOptions o;
  o.measurement.min_samples = 7;
  o.measurement.timing_modes = {TimingMode::batch, TimingMode::cold};
  o.measurement.passes = {Pass::kernels};
  o.measurement.timeout_s = 12.5;
  o.measurement.keep_samples = true;
  o.measurement.trace = true;
  o.tolerance = {{DType::bf16, 0.03}};
  o.peak_tflops = 799.5;
  o.seed = 99;
  o.info.config_fingerprint = "ff";
  const Message m = parse_message(setup_message(o));
  ASSERT_EQ(m.type, "setup");
  EXPECT_EQ(m.options.measurement.min_samples, 7);
  EXPECT_EQ(m.options.measurement.timing_modes, o.measurement.timing_modes);
  EXPECT_EQ(m.options.measurement.passes, o.measurement.passes);
  EXPECT_EQ(m.options.measurement.timeout_s, 12.5);
  EXPECT_TRUE(m.options.measurement.keep_samples);
  EXPECT_TRUE(m.options.measurement.trace);
  EXPECT_EQ(m.options.tolerance, o.tolerance);
  EXPECT_EQ(m.options.peak_tflops, 799.5);
  EXPECT_EQ(m.options.seed, 99u);
  EXPECT_EQ(m.options.info.config_fingerprint, "ff");
  RunOptions no_peak;
  EXPECT_FALSE(parse_message(setup_message(no_peak)).options.peak_tflops);
}

TEST(Protocol, HelloMeasurePassFatal) {
  Hello h;
  h.host.cuda_available = true, h.host.device_name = "NVIDIA H200",
  h.host.l2_cache_bytes = 62914560;
  h.backends = {{"flash", "FlashAttention-2", "/p/attnbench_flash.so"}};
  h.failures = {{"/p/attnbench_bad.so", "plugin ABI version 42"}};
  const Message hello = parse_message(hello_message(h));
  EXPECT_EQ(hello.type, "hello");
  EXPECT_TRUE(hello.hello.host.cuda_available);
  EXPECT_EQ(hello.hello.host.l2_cache_bytes, 62914560);
  ASSERT_EQ(hello.hello.backends.size(), 1u);
  EXPECT_EQ(hello.hello.backends[0].file, "/p/attnbench_flash.so");
  EXPECT_EQ(hello.hello.failures.at(0).reason, "plugin ABI version 42");
  // A Python backend's failure keeps its kind and whether the config is to blame.
  LoadFailure py{"/m/flex.py:nope", "flex.py defines no function 'nope'", "python"};
  py.config_error = true, py.lost_backend = "flex";
  h.failures = {py};
  const LoadFailure back = parse_message(hello_message(h)).hello.failures.at(0);
  EXPECT_EQ(back.kind, "python");
  EXPECT_EQ(back.file, "/m/flex.py:nope");
  EXPECT_TRUE(back.config_error);
  EXPECT_FALSE(back.duplicate);
  EXPECT_EQ(back.lost_backend, "flex");
  const Message loading =
      parse_message(loading_message("python", "/m/flex.py:attention", "flex"));
  EXPECT_EQ(loading.kind, "python");
  EXPECT_EQ(loading.name, "/m/flex.py:attention");
  EXPECT_EQ(loading.backend, "flex");
  EXPECT_EQ(parse_message(loading_message("plugin", "/p/attnbench_flash.so", "")).backend, "");
  // A backend of another kind as the worker's --backend argument, and back: every field,
  // whatever characters its paths hold.
  const BackendSpec spec{"source", "mine", "/a=b/c:d/my kernel.cu", "k/my kernel.cu",
                         "/cache/x/attnbench_my.so", 3, 4};
  const BackendSpec parsed = parse_backend_spec_arg(backend_spec_arg(spec));
  EXPECT_EQ(parsed.kind, "source");
  EXPECT_EQ(parsed.name, "mine");
  EXPECT_EQ(parsed.target, spec.target);
  EXPECT_EQ(parsed.written, spec.written);
  EXPECT_EQ(parsed.library, spec.library);
  EXPECT_THROW(parse_backend_spec_arg("not json"), std::invalid_argument);
  EXPECT_THROW(parse_backend_spec_arg(R"({"kind":"nope","name":"a","target":"b","written":"c",)"
                                      R"("library":""})"),
               std::invalid_argument);

  Point p;
  p.id = "b1-h4-kv2-s8-skv32-d64-bf16-causal-cpu-bwd";
  p.problem.heads = 4, p.problem.kv_heads = 2, p.problem.seq_len = 8, p.problem.seq_len_kv = 32;
  p.problem.direction = Direction::bwd;
  const Message measure = parse_message(measure_message(p, "naive"));
  EXPECT_EQ(measure.point.id, p.id);
  EXPECT_EQ(measure.point.problem.seq_len, 8);
  EXPECT_EQ(measure.point.problem.seq_len_kv, 32);
  EXPECT_EQ(measure.point.problem.heads, 4);
  EXPECT_EQ(measure.point.problem.kv_heads, 2);
  EXPECT_EQ(measure.point.problem.direction, Direction::bwd);
  EXPECT_EQ(measure.backend, "naive");
  EXPECT_EQ(parse_message(pass_message("timing")).name, "timing");
  EXPECT_EQ(parse_message(fatal_message("sticky CUDA error")).reason, "sticky CUDA error");
  EXPECT_EQ(parse_message(quit_message()).type, "quit");
  // A plugin's reason that is not UTF-8 travels, replaced, rather than breaking the worker.
  EXPECT_NE(parse_message(fatal_message(std::string("bad \xff byte"))).reason.find("bad"),
            std::string::npos);
}

// Paths travel byte for byte, UTF-8 or not (a folder named in Latin-1, say): every message that
// names a file, in each of its path fields; the backend's build with them.
TEST(Protocol, PathsThatAreNotUtf8KeepTheirBytes) {
  const std::string latin1 = "/d\xe9j\xe0/vu \xff/";  // not UTF-8
  const std::string utf8 = "/d\xc3\xa9j\xc3\xa0/";    // UTF-8: a plain JSON string
  for (const std::string& dir : {latin1, utf8}) {
    Hello h;
    h.backends = {{"mine", "d", dir + "attnbench_mine.so", "so:0123456789abcdef"}};
    h.failures = {{dir + "bad.py:f", "raised", "python"}};
    const Message hello = parse_message(hello_message(h));
    EXPECT_EQ(hello.hello.backends.at(0).file, dir + "attnbench_mine.so");
    EXPECT_EQ(hello.hello.backends.at(0).build, "so:0123456789abcdef");
    EXPECT_EQ(hello.hello.failures.at(0).file, dir + "bad.py:f");
    EXPECT_EQ(parse_message(loading_message("python", dir + "m.py:f", "m")).name, dir + "m.py:f");
    const BackendSpec spec{"source", "mine", dir + "k.cu", dir + "w.cu", dir + "lib.so", 1, 2};
    const BackendSpec back = parse_backend_spec_arg(backend_spec_arg(spec));
    EXPECT_EQ(back.target, spec.target);
    EXPECT_EQ(back.written, spec.written);
    EXPECT_EQ(back.library, spec.library);
  }
  // A UTF-8 path stays a readable string on the wire; hex that is not pairs of digits is refused.
  EXPECT_NE(backend_spec_arg({"source", "m", utf8 + "k.cu", "", "", 0, 0}).find("k.cu"),
            std::string::npos);
  for (const char* bad : {"f", "1g", "FF", "zz", "abc"})  // odd, not hex, upper case (never sent)
    EXPECT_THROW(parse_backend_spec_arg(std::string(R"({"kind":"source","name":"a","target":{"hex":")") +
                                        bad + R"("},"written":"c","library":""})"),
                 std::invalid_argument)
        << bad;
  EXPECT_EQ(parse_backend_spec_arg(R"({"kind":"source","name":"a","target":{"hex":"61ff"},)"
                                   R"("written":"c","library":""})")
                .target,
            "a\xff");
  Hello h;
  h.backends = {{"mine", "d", "x", ""}};
  std::string hello = hello_message(h);
  hello.replace(hello.find("\"x\""), 3, R"({"hex":"zz"})");
  EXPECT_THROW(parse_message(hello), std::runtime_error);
}

TEST(Protocol, AnythingElseIsRefused) {
  EXPECT_THROW(parse_message("not json"), std::runtime_error);
  EXPECT_THROW(parse_message(R"({"type":"dance"})"), std::runtime_error);
  EXPECT_THROW(parse_message(R"({"type":"measure"})"), std::runtime_error);
  EXPECT_THROW(parse_message(R"({"records":{}})"), std::runtime_error);
}

}  // namespace
}  // namespace attnbench
