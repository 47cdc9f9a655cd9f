// Traces: the pass's result as records (clocks, tracks, flows) and the Chrome trace JSON.
#include "records/trace.hpp"
#include "write/trace_json.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

namespace attnbench {
namespace {

using json = nlohmann::json;

// Two calls on thread 7 (OS id 70), an op on thread 8 (autograd's); CUPTI's clock runs at the
// steady clock's rate, 1,000,000 ns ahead.
TraceResult sample_result() {
  TraceResult r;
  r.thread = 7, r.os_thread = 70;
  r.calls = {{10'000, 20'000}, {30'000, 40'000}};
  r.cpu = {{"scaled_dot_product_attention", 11'000, 19'000, 7, 70, 0},
           {"softmax", 12'000, 13'000, 7, 70, 1},
           {"mm", 14'000, 15'000, 8, 80, 0},
           {"never_closed", 16'000, -1, 7, 70, 1}};
  GpuTrace g;
  g.first = {1'010'000, 10'000};
  g.last = {1'040'000, 40'000};
  g.launches = {
      {"cudaLaunchKernel", 1'012'500, 1'012'900, 70, 5},
      {"cudaMemsetAsync", 1'012'000, 1'012'100, 8, 7},  // low half of thread 8's pthread id
      {"cuLaunchKernelEx", 1'032'000, 1'032'400, 99, 6}};
  GpuActivity k;
  k.kind = ActivityKind::kernel, k.name = "flash_fwd", k.start_ns = 1'013'000;
  k.end_ns = 1'018'000, k.correlation_id = 5, k.stream_id = 7, k.iteration = 0;
  k.grid[0] = 4, k.block[0] = 128;
  GpuActivity m;
  m.kind = ActivityKind::memset, m.name = "memset", m.start_ns = 1'033'000, m.end_ns = 1'033'500;
  m.correlation_id = 6, m.stream_id = 7, m.bytes = 64, m.iteration = 1;
  GpuActivity orphan = m;  // its launch was not recorded: no arrow
  orphan.correlation_id = 42, orphan.start_ns = 1'034'000, orphan.end_ns = 1'034'100;
  g.activities = {k, m, orphan};
  r.gpu = g;
  return r;
}

const TraceEvent* find(const Trace& t, const std::string& name) {
  for (const auto& e : t.events)
    if (e.name == name) return &e;
  return nullptr;
}

TEST(Trace, HostSpansAreInMicrosecondsFromTheFirstCallOnTheirThreadsTrack) {
  const Trace t = trace_records(sample_result());
  EXPECT_EQ(t.calls, 2);
  const TraceEvent* call2 = find(t, "call 2");
  ASSERT_TRUE(call2);
  EXPECT_DOUBLE_EQ(call2->start_us, 20);
  EXPECT_DOUBLE_EQ(call2->duration_us, 10);
  const TraceEvent* softmax = find(t, "softmax");
  ASSERT_TRUE(softmax);
  EXPECT_EQ(softmax->category, "cpu_op");
  EXPECT_EQ(softmax->track, 0u);
  EXPECT_DOUBLE_EQ(softmax->start_us, 2);
  EXPECT_DOUBLE_EQ(softmax->duration_us, 1);
  EXPECT_EQ(find(t, "mm")->track, 1u);  // another thread, its own track
  EXPECT_EQ(t.host_tracks.at(0), "calling thread");
  EXPECT_EQ(t.host_tracks.at(1), "thread 80");
  EXPECT_FALSE(find(t, "never_closed"));
  for (size_t i = 1; i < t.events.size(); ++i)
    EXPECT_LE(t.events[i - 1].start_us, t.events[i].start_us);
}

TEST(Trace, GpuActivitiesAreOnTheHostTimeLineAndLinkedToTheirLaunch) {
  const Trace t = trace_records(sample_result());
  const TraceEvent* kernel = find(t, "flash_fwd");
  ASSERT_TRUE(kernel);
  EXPECT_EQ(kernel->lane, TraceLane::gpu);
  EXPECT_EQ(kernel->track, 7u);            // the stream
  EXPECT_NEAR(kernel->start_us, 3, 1e-9);  // CUPTI 1,013,000 is steady 13,000
  EXPECT_NEAR(kernel->duration_us, 5, 1e-9);
  EXPECT_EQ(kernel->flow, 5u);
  const TraceEvent* launch = find(t, "cudaLaunchKernel");
  ASSERT_TRUE(launch);
  EXPECT_EQ(launch->flow, 5u);
  EXPECT_EQ(launch->track, 0u);  // CUPTI named the calling thread by its OS id
  EXPECT_NEAR(launch->start_us, 2.5, 1e-9);
  EXPECT_EQ(find(t, "cudaMemsetAsync")->track, 1u);
  const TraceEvent* driver = find(t, "cuLaunchKernelEx");
  EXPECT_EQ(t.host_tracks.at(driver->track), "CUDA API, thread 99");
  int memsets = 0;
  for (const auto& e : t.events)
    if (e.name == "memset") {
      ++memsets;
      EXPECT_EQ(e.flow, e.start_us < 23.9 ? 6u : 0u) << "only launched activities get an arrow";
    }
  EXPECT_EQ(memsets, 2);
}

TEST(Trace, ChromeJsonHasLanesCompleteEventsAndMatchedFlows) {
  BackendRecords records;
  records.point_id = "p", records.backend = "flash";
  records.rows.emplace_back();
  records.rows.back().run.device_name = "NVIDIA H200";
  records.trace = trace_records(sample_result());
  const json doc = json::parse(chrome_trace_json(records));
  EXPECT_EQ(doc.at("otherData").at("backend"), "flash");
  std::map<std::string, int> phases;
  std::map<uint64_t, std::string> flow_start, flow_end;
  std::set<std::string> processes;
  for (const auto& e : doc.at("traceEvents")) {
    phases[e.at("ph")]++;
    if (e.at("ph") == "M" && e.at("name") == "process_name")
      processes.insert(e.at("args").at("name").get<std::string>());
    if (e.at("ph") == "X") {
      EXPECT_GE(e.at("dur").get<double>(), 0);
      EXPECT_TRUE(e.contains("ts") && e.contains("pid") && e.contains("tid"));
    }
    if (e.at("ph") == "s") flow_start[e.at("id")] = e.at("cat");
    if (e.at("ph") == "f") {
      flow_end[e.at("id")] = e.at("cat");
      EXPECT_EQ(e.at("bp"), "e");
    }
  }
  EXPECT_EQ(processes, (std::set<std::string>{"host", "GPU: NVIDIA H200"}));
  EXPECT_EQ(phases["X"], 2 + 3 + 3 + 3);  // calls, closed host ops, launches, GPU activities
  EXPECT_EQ(flow_start, (std::map<uint64_t, std::string>{{5, "ac2g"}, {6, "ac2g"}}));
  EXPECT_EQ(flow_end, flow_start);
}

TEST(Trace, CpuOnlyTraceHasNoGpuProcess) {
  TraceResult r = sample_result();
  r.gpu.reset();
  BackendRecords records;
  records.trace = trace_records(r);
  const json doc = json::parse(chrome_trace_json(records));
  for (const auto& e : doc.at("traceEvents")) {
    EXPECT_EQ(e.at("pid"), 1) << e.dump();
    EXPECT_NE(e.at("ph"), "s");
  }
}

TEST(Trace, FilesSitBesideTheReport) {
  EXPECT_EQ(trace_path("results/seed.csv", "b1-s64", "flash", 0),
            "results/seed.traces/b1-s64__flash.json");
  EXPECT_EQ(trace_path("seed.csv", "p", "naive", 2), "seed.traces/p__naive__rep3.json");
}

}  // namespace
}  // namespace attnbench
