#include "measure/kernel_stats.hpp"

#include <gtest/gtest.h>

namespace attnbench {
namespace {

GpuActivity activity(ActivityKind kind, const std::string& name, uint64_t start_ns,
                     uint64_t duration_ns, int grid_x = 0, uint64_t bytes = 0) {
  GpuActivity a;
  a.kind = kind;
  a.name = name;
  a.start_ns = start_ns;
  a.end_ns = start_ns + duration_ns;
  a.grid[0] = grid_x, a.grid[1] = 1, a.grid[2] = 1;
  a.block[0] = 128, a.block[1] = 1, a.block[2] = 1;
  a.registers_per_thread = 255;
  a.static_smem_bytes = 16;
  a.dynamic_smem_bytes = 49152;
  a.bytes = bytes;
  return a;
}

// Two traced calls, each: "gemm" twice with one grid and once with another, one memcpy, two
// memsets.
GpuTrace two_calls() {
  using K = ActivityKind;
  GpuTrace t;
  t.iterations = 2;
  for (uint64_t call = 0; call < 2; ++call) {
    const uint64_t t0 = call * 1000000;
    t.activities.push_back(activity(K::kernel, "gemm", t0 + 0, 1000 + call * 2000, 64));
    t.activities.push_back(activity(K::kernel, "gemm", t0 + 10000, 1000, 64));
    t.activities.push_back(activity(K::kernel, "gemm", t0 + 20000, 5000, 32));
    t.activities.push_back(activity(K::memcpy, "memcpy DtoD", t0 + 30000, 700, 0, 1 << 20));
    t.activities.push_back(activity(K::memset, "memset", t0 + 40000, 100, 0, 4));
    t.activities.push_back(activity(K::memset, "memset", t0 + 50000, 300, 0, 4));
  }
  return t;
}

TEST(KernelRows, CountsEveryKindPerCall) {
  const KernelsResult r = kernel_records(two_calls(), [](const GpuActivity&) { return 12.5; });
  EXPECT_DOUBLE_EQ(r.kernels_per_call, 3);
  EXPECT_DOUBLE_EQ(r.memcpy_per_call, 1);
  EXPECT_DOUBLE_EQ(r.memset_per_call, 2);
}

// A call's GPU time is its activities' durations added up; its span runs from its first start to
// its last end (the device is idle between traced calls).
TEST(KernelRows, GpuTimeAndSpanPerCall) {
  GpuTrace t = two_calls();
  for (size_t i = 0; i < t.activities.size(); ++i)
    t.activities[i].iteration = static_cast<int>(i / 6);
  const KernelsResult r = kernel_records(t, [](const GpuActivity&) { return 12.5; });
  EXPECT_DOUBLE_EQ(r.gpu_us_per_call, (8100.0 + 10100.0) / 2 / 1000);  // ns to us
  EXPECT_DOUBLE_EQ(r.gpu_span_us_per_call, 50.3);
  EXPECT_DOUBLE_EQ(r.kernel_us_per_call, (7000.0 + 9000.0) / 2 / 1000);  // no memcpy or memset
}

TEST(KernelRows, OneRowPerKindNameAndLaunchShape) {
  int occupancy_asked = 0;
  const KernelsResult r = kernel_records(two_calls(), [&](const GpuActivity& a) {
    ++occupancy_asked;
    return a.grid[0] == 64 ? std::optional<double>(12.5) : std::nullopt;
  });
  ASSERT_EQ(r.kernels.size(), 4u);
  EXPECT_EQ(occupancy_asked, 2);  // kernels only, once per row

  const KernelStat& wide = r.kernels[1];  // sorted: "kernel|gemm|32,..." before "kernel|gemm|64,..."
  EXPECT_EQ(wide.kind, ActivityKind::kernel);
  EXPECT_EQ(wide.name, "gemm");
  EXPECT_EQ(wide.grid, "64,1,1");
  EXPECT_EQ(wide.block, "128,1,1");
  EXPECT_DOUBLE_EQ(wide.launches_per_call, 2);
  EXPECT_DOUBLE_EQ(wide.duration_us_mean, (1.0 + 1.0 + 3.0 + 1.0) / 4);  // ns -> us
  EXPECT_EQ(wide.registers_per_thread, 255);
  EXPECT_EQ(wide.static_smem_bytes, 16);
  EXPECT_EQ(wide.dynamic_smem_bytes, 49152);
  EXPECT_EQ(wide.theoretical_occupancy_pct, 12.5);
  EXPECT_FALSE(wide.bytes);

  const KernelStat& narrow = r.kernels[0];
  EXPECT_EQ(narrow.grid, "32,1,1");
  EXPECT_DOUBLE_EQ(narrow.launches_per_call, 1);
  EXPECT_DOUBLE_EQ(narrow.duration_us_mean, 5);
  EXPECT_FALSE(narrow.theoretical_occupancy_pct);

  const KernelStat& copy = r.kernels[2];
  EXPECT_EQ(copy.kind, ActivityKind::memcpy);
  EXPECT_EQ(copy.name, "memcpy DtoD");
  EXPECT_EQ(copy.bytes, 1 << 20);
  EXPECT_DOUBLE_EQ(copy.launches_per_call, 1);
  EXPECT_EQ(copy.grid, "");  // launch shape and resources do not apply to copies
  EXPECT_FALSE(copy.registers_per_thread);

  const KernelStat& set = r.kernels[3];
  EXPECT_EQ(set.kind, ActivityKind::memset);
  EXPECT_DOUBLE_EQ(set.launches_per_call, 2);
  EXPECT_DOUBLE_EQ(set.duration_us_mean, 0.2);
  EXPECT_EQ(set.bytes, 4);
}

TEST(KernelRows, CarriesWhetherEveryCallLaunchedTheSameKernels) {
  GpuTrace t = two_calls();
  EXPECT_TRUE(kernel_records(t, [](const GpuActivity&) { return std::nullopt; }).same_every_call);
  t.same_every_iteration = false;
  t.difference = "call 1: 1x gemm; call 2: 2x gemm";
  const KernelsResult r = kernel_records(t, [](const GpuActivity&) { return std::nullopt; });
  EXPECT_FALSE(r.same_every_call);
  EXPECT_EQ(r.difference, "call 1: 1x gemm; call 2: 2x gemm");
}

TEST(KernelRows, ATraceOfNoCallsIsAProgrammingError) {
  GpuTrace empty;
  EXPECT_THROW(kernel_records(empty, [](const GpuActivity&) { return std::nullopt; }),
               std::logic_error);
}

}  // namespace
}  // namespace attnbench
