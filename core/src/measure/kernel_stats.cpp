#include "measure/kernel_stats.hpp"

#include "base/names.hpp"

#include <map>
#include <stdexcept>
#include <string>

namespace attnbench {

KernelsResult kernel_records(const GpuTrace& trace, const OccupancyFn& occupancy) {
  if (trace.iterations < 1) throw std::logic_error("a GPU trace of no calls");
  const double calls = trace.iterations;
  KernelsResult records;
  int kernels = 0, memcpys = 0, memsets = 0;
  std::map<std::string, std::vector<const GpuActivity*>>
      groups;  // same activity, same launch shape
  for (const auto& a : trace.activities) {
    switch (a.kind) {
      case ActivityKind::kernel: ++kernels; break;
      case ActivityKind::memcpy: ++memcpys; break;
      case ActivityKind::memset: ++memsets; break;
    }
    groups[to_string(a.kind) + "|" + a.name + "|" + launch_dims(a.grid) + "|" +
           launch_dims(a.block)]
        .push_back(&a);
  }
  double busy_ns = 0, kernel_ns = 0;
  std::map<int, std::pair<uint64_t, uint64_t>> spans;  // per traced call: first start, last end
  for (const auto& a : trace.activities) {
    busy_ns += static_cast<double>(a.end_ns - a.start_ns);
    if (a.kind == ActivityKind::kernel) kernel_ns += static_cast<double>(a.end_ns - a.start_ns);
    auto [it, fresh] = spans.emplace(a.iteration, std::pair{a.start_ns, a.end_ns});
    if (!fresh)
      it->second = {std::min(it->second.first, a.start_ns), std::max(it->second.second, a.end_ns)};
  }
  records.gpu_us_per_call = busy_ns / calls / 1e3;
  records.kernel_us_per_call = kernel_ns / calls / 1e3;
  double span_sum = 0;
  for (const auto& [call, span] : spans)
    span_sum += static_cast<double>(span.second - span.first) / 1e3;
  records.gpu_span_us_per_call = span_sum / calls;
  records.kernels_per_call = kernels / calls;
  records.memcpy_per_call = memcpys / calls;
  records.memset_per_call = memsets / calls;
  records.same_every_call = trace.same_every_iteration;
  records.difference = trace.difference;
  for (const auto& [key, launches] : groups) {
    const GpuActivity& a = *launches.front();
    KernelStat k;
    k.kind = a.kind;
    k.name = a.name;
    k.launches_per_call = static_cast<double>(launches.size()) / calls;
    double total_ns = 0;
    for (const auto* l : launches) total_ns += static_cast<double>(l->end_ns - l->start_ns);
    k.duration_us_mean = total_ns / static_cast<double>(launches.size()) / 1e3;
    if (a.kind == ActivityKind::kernel) {
      k.grid = launch_dims(a.grid);
      k.block = launch_dims(a.block);
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
