#include "kernel_rows.hpp"

#include <map>
#include <stdexcept>
#include <string>

namespace attnbench {

std::string to_string(GpuActivity::Kind kind) {
  switch (kind) {
    case GpuActivity::Kind::kernel: return "kernel";
    case GpuActivity::Kind::memcpy: return "memcpy";
    case GpuActivity::Kind::memset: return "memset";
  }
  return "?";
}

namespace {

std::string triple(const int v[3]) {
  return std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]);
}

}  // namespace

TraceRecords trace_records(const GpuTrace& trace, const OccupancyFn& occupancy) {
  if (trace.iterations < 1) throw std::logic_error("a GPU trace of no calls");
  const double calls = trace.iterations;
  TraceRecords records;
  int kernels = 0, memcpys = 0, memsets = 0;
  std::map<std::string, std::vector<const GpuActivity*>> groups;  // same activity, same launch shape
  for (const auto& a : trace.activities) {
    switch (a.kind) {
      case GpuActivity::Kind::kernel: ++kernels; break;
      case GpuActivity::Kind::memcpy: ++memcpys; break;
      case GpuActivity::Kind::memset: ++memsets; break;
    }
    groups[to_string(a.kind) + "|" + a.name + "|" + triple(a.grid) + "|" + triple(a.block)].push_back(&a);
  }
  records.counts = {kernels / calls, memcpys / calls, memsets / calls};
  for (const auto& [key, launches] : groups) {
    const GpuActivity& a = *launches.front();
    KernelRow k;
    k.kind = to_string(a.kind);
    k.name = a.name;
    k.launches_per_call = static_cast<double>(launches.size()) / calls;
    double total_ns = 0;
    for (const auto* l : launches) total_ns += static_cast<double>(l->end_ns - l->start_ns);
    k.duration_us_mean = total_ns / static_cast<double>(launches.size()) / 1e3;
    if (a.kind == GpuActivity::Kind::kernel) {
      k.grid = triple(a.grid);
      k.block = triple(a.block);
      k.registers_per_thread = a.registers_per_thread;
      k.static_smem_bytes = a.static_smem_bytes;
      k.dynamic_smem_bytes = a.dynamic_smem_bytes;
      k.theoretical_occupancy_pct = occupancy(a);
    } else {
      k.bytes = static_cast<int64_t>(a.bytes);
    }
    records.kernels.push_back(std::move(k));
  }
  return records;
}

}  // namespace attnbench
