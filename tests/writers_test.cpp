// One set of records through every writer, as google/benchmark checks every output format: the CSV
// files, the summary, compare's JSON, the Google Benchmark export and the trace each say what the
// records say (values and units, not only that keys exist).
#include "analysis/compare.hpp"
#include "analysis/summary.hpp"
#include "write/csv.hpp"
#include "analysis/export_gbench.hpp"
#include "write/report_writer.hpp"
#include "write/schema.hpp"
#include "write/trace_json.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <sstream>

namespace attnbench {
namespace {

namespace fs = std::filesystem;

BackendRecords records_of(const std::string& backend, double median_ms, Status status) {
  BackendRecords b;
  b.point_id = "b2-h4-s256-d64-bf16-causal-cuda";
  b.backend = backend;
  Row r;
  r.point_id = b.point_id, r.backend = backend;
  r.problem.batch = 2, r.problem.heads = 4, r.problem.kv_heads = 4;
  r.problem.seq_len = 256, r.problem.seq_len_kv = 256, r.problem.head_dim = 64;
  r.problem.head_dim_v = 64;  // as a run settles it: a report never holds 0
  r.problem.causal = true, r.problem.device = Device::cuda;
  r.timing_mode = TimingMode::cold;
  r.status = status;
  r.run.device_name = "NVIDIA H200", r.run.host_name = "node7", r.run.host_cpus = 16;
  r.run.git_sha = "abc", r.run.config_fingerprint = "f";
  if (status == Status::ok) {
    r.time_ms_median = median_ms, r.time_ms_p10 = median_ms * 0.9, r.time_ms_p90 = median_ms * 1.1;
    r.time_rel_noise = 0.01, r.samples = 3, r.calls_per_sample = 1;
    r.cpu_us_median = 12.5, r.kernels_per_call = 1, r.gflop = 0.5, r.tflops = 0.5 / median_ms;
    b.samples = {{TimingMode::cold, {median_ms * 0.9, median_ms, median_ms * 1.1}}};
    Trace t;
    t.calls = 1;
    t.host_tracks = {{0, "calling thread"}};
    t.events = {{"call 1", "call", TraceLane::host, 0, 0.0, 20.0, 0, {}},
                {"cudaLaunchKernel", "cuda_api", TraceLane::host, 0, 1.0, 3.0, 7, {}},
                {"flash_fwd", "kernel", TraceLane::gpu, 7, 5.0, median_ms * 1000, 7, {}}};
    b.trace = t;
  } else {
    r.reason = "the backend cannot run this point";
  }
  b.rows = {r};
  return b;
}

TEST(Writers, OneSetOfRecordsThroughEveryWriter) {
  const fs::path dir =
      fs::temp_directory_path() / ("attnbench-writers-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::vector<BackendRecords> all = {records_of("flash", 0.25, Status::ok),
                                           records_of("fa3", 0.125, Status::ok),
                                           records_of("naive", 0, Status::unsupported)};
  {
    ReportWriter writer((dir / "r.csv").string(), true, false);
    for (const auto& b : all) writer.write(b);
  }
  const CsvTable report = read_csv((dir / "r.csv").string());
  ASSERT_EQ(report.rows.size(), 3u);
  EXPECT_EQ(report.at(1, "time_ms_median"), "0.125");
  EXPECT_EQ(report.at(1, "host_name"), "node7");
  EXPECT_EQ(report.at(2, "status"), "unsupported");
  EXPECT_EQ(report.at(2, "time_ms_median"), "");  // empty, never zero

  // The summary: every backend's row, its time and its status.
  std::ostringstream summary;
  print_summary(typed_rows(report), summary);
  for (const char* want : {"flash", "fa3", "naive", "0.25", "0.125", "unsupported"})
    EXPECT_NE(summary.str().find(want), std::string::npos) << want << " in\n" << summary.str();

  // compare, backend against backend: fa3 over flash is exactly 0.5 on the medians.
  CompareOptions options;
  options.baseline_backend = "flash";
  const Comparison c = compare_backends(report, options, read_samples((dir / "r.csv").string()));
  std::ostringstream json_text;
  print_comparison(c, json_text, CompareFormat::json);
  const auto doc = nlohmann::json::parse(json_text.str());
  bool saw_fa3 = false;
  for (const auto& row : doc.at("metrics").at(0).at("rows")) {
    if (row.at("backend") != "fa3") continue;
    saw_fa3 = true;
    EXPECT_DOUBLE_EQ(row.at("base").get<double>(), 0.25);
    EXPECT_DOUBLE_EQ(row.at("new").get<double>(), 0.125);
    EXPECT_DOUBLE_EQ(row.at("ratio").get<double>(), 0.5);
    EXPECT_EQ(row.at("verdict"), "better");
  }
  EXPECT_TRUE(saw_fa3) << doc.dump();

  // Google Benchmark JSON: nanoseconds, a run per sample, the median aggregate equal to the row's.
  std::ostringstream gbench;
  write_gbench_json(report, read_samples((dir / "r.csv").string()), gbench);
  const auto g = nlohmann::json::parse(gbench.str());
  EXPECT_EQ(g.at("context").at("host_name"), "node7");
  EXPECT_EQ(g.at("context").at("num_cpus"), 16);
  EXPECT_EQ(g.at("context").at("attnbench_device_name"), "NVIDIA H200");
  int runs = 0;
  for (const auto& b : g.at("benchmarks")) {
    const std::string name = b.at("name");
    EXPECT_EQ(b.at("time_unit"), "ns") << name;
    if (name == "b2-h4-s256-d64-bf16-causal-cuda/fa3/cold_median") {
      EXPECT_DOUBLE_EQ(b.at("real_time").get<double>(), 0.125e6);
      EXPECT_DOUBLE_EQ(b.at("cpu_time").get<double>(), 12.5e3);
    }
    if (b.at("run_name") == "b2-h4-s256-d64-bf16-causal-cuda/fa3/cold" &&
        b.at("run_type") == "iteration")
      ++runs;
    if (name == "b2-h4-s256-d64-bf16-causal-cuda/naive/cold") {
      EXPECT_EQ(b.at("error_occurred"), true);
      EXPECT_EQ(b.at("error_message"), "unsupported: the backend cannot run this point");
    }
  }
  EXPECT_EQ(runs, 3);

  // The trace: the kernel on the GPU lane for as long as the records say, and the arrow from its
  // launch: it starts ('s') on the host lane at the launch, on the launching thread, and ends ('f',
  // bound to the enclosing slice) on the GPU lane at the kernel, on its stream.
  const auto trace = nlohmann::json::parse(chrome_trace_json(all[1]));
  int host_pid = -1, gpu_pid = -1;
  for (const auto& e : trace.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == "process_name")
      (e.at("args").at("name") == "host" ? host_pid : gpu_pid) = e.at("pid").get<int>();
  ASSERT_NE(host_pid, gpu_pid);
  const nlohmann::json *kernel = nullptr, *start = nullptr, *end = nullptr;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.value("name", "") == "flash_fwd" && e.at("ph") == "X") kernel = &e;
    if (e.at("ph") == "s") start = &e;
    if (e.at("ph") == "f") end = &e;
  }
  ASSERT_TRUE(kernel && start && end) << trace.dump();
  EXPECT_EQ(kernel->at("pid"), gpu_pid);
  EXPECT_DOUBLE_EQ(kernel->at("dur").get<double>(), 125.0);
  EXPECT_EQ(start->at("id"), 7);
  EXPECT_EQ(end->at("id"), 7);
  EXPECT_EQ(start->at("pid"), host_pid);
  EXPECT_EQ(start->at("tid"), 0);
  EXPECT_DOUBLE_EQ(start->at("ts").get<double>(), 1.0);  // the launch
  EXPECT_EQ(end->at("pid"), gpu_pid);
  EXPECT_EQ(end->at("tid"), 7);
  EXPECT_DOUBLE_EQ(end->at("ts").get<double>(), 5.0);  // the kernel
  EXPECT_EQ(end->at("bp"), "e");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnbench
