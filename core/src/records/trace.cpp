#include "records/trace.hpp"

#include "base/names.hpp"
#include "measure/kernel_stats.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

namespace attnbench {

Trace trace_records(const TraceResult& r) {
  Trace trace;
  trace.calls = static_cast<int>(r.calls.size());
  if (r.calls.empty()) return trace;
  const int64_t origin = r.calls.front().first;
  auto us = [&](int64_t steady_ns) { return static_cast<double>(steady_ns - origin) / 1e3; };

  // Host tracks: the calling thread first, then others (autograd's) as they appear. CUPTI names a
  // launch's thread by a 32-bit id: the low half of pthread_self on the H200's CUDA 13, the OS id
  // elsewhere; both are kept.
  std::map<uint64_t, uint64_t> track_of;     // pthread id -> track
  std::map<uint32_t, uint64_t> cupti_track;  // either 32-bit id -> track
  auto add_track = [&](uint64_t thread, uint32_t os_thread) {
    auto [it, fresh] = track_of.emplace(thread, track_of.size());
    if (fresh) {
      trace.host_tracks[it->second] =
          it->second == 0 ? "calling thread" : "thread " + std::to_string(os_thread);
      cupti_track[os_thread] = it->second;
      cupti_track[static_cast<uint32_t>(thread)] = it->second;
    }
    return it->second;
  };
  add_track(r.thread, r.os_thread);
  auto track = [&](const CpuSpan& s) { return add_track(s.thread, s.os_thread); };

  for (size_t i = 0; i < r.calls.size(); ++i)
    trace.events.push_back({"call " + std::to_string(i + 1),
                            "call",
                            TraceLane::host,
                            0,
                            us(r.calls[i].first),
                            us(r.calls[i].second) - us(r.calls[i].first),
                            0,
                            {}});
  for (const CpuSpan& s : r.cpu) {
    if (s.end_ns < s.start_ns) continue;  // never closed (the call threw)
    trace.events.push_back({s.name,
                            "cpu_op",
                            TraceLane::host,
                            track(s),
                            us(s.start_ns),
                            us(s.end_ns) - us(s.start_ns),
                            0,
                            {{"depth", std::to_string(s.depth)}}});
  }

  if (r.gpu) {
    const GpuTrace& g = *r.gpu;
    const double cupti_span = static_cast<double>(g.last.cupti_ns - g.first.cupti_ns);
    const double scale =
        cupti_span > 0 ? static_cast<double>(g.last.steady_ns - g.first.steady_ns) / cupti_span
                       : 1.0;
    auto gpu_us = [&](uint64_t cupti_ns) {
      const double steady =
          static_cast<double>(g.first.steady_ns) +
          (static_cast<double>(cupti_ns) - static_cast<double>(g.first.cupti_ns)) * scale;
      return (steady - static_cast<double>(origin)) / 1e3;
    };
    // An arrow needs both ends: a launch and an activity with the same correlation id.
    std::set<uint32_t> on_gpu, launched;
    for (const GpuActivity& a : g.activities) on_gpu.insert(a.correlation_id);
    for (const ApiCall& c : g.launches)
      if (on_gpu.count(c.correlation_id)) launched.insert(c.correlation_id);
    for (const ApiCall& c : g.launches) {
      // A thread we saw no op on gets a track of its own.
      uint64_t t;
      if (auto it = cupti_track.find(c.thread_id); it != cupti_track.end()) {
        t = it->second;
      } else {
        t = 1000 + c.thread_id;
        trace.host_tracks[t] = "CUDA API, thread " + std::to_string(c.thread_id);
      }
      trace.events.push_back({c.name,
                              "cuda_api",
                              TraceLane::host,
                              t,
                              gpu_us(c.start_ns),
                              gpu_us(c.end_ns) - gpu_us(c.start_ns),
                              launched.count(c.correlation_id) ? c.correlation_id : 0u,
                              {{"correlation", std::to_string(c.correlation_id)}}});
    }
    for (const GpuActivity& a : g.activities) {
      TraceEvent e{a.name,
                   to_string(a.kind),
                   TraceLane::gpu,
                   a.stream_id,
                   gpu_us(a.start_ns),
                   gpu_us(a.end_ns) - gpu_us(a.start_ns),
                   launched.count(a.correlation_id) ? a.correlation_id : 0u,
                   {}};
      e.args.emplace_back("correlation", std::to_string(a.correlation_id));
      if (a.kind == ActivityKind::kernel) {
        e.args.emplace_back("grid", launch_dims(a.grid));
        e.args.emplace_back("block", launch_dims(a.block));
        e.args.emplace_back("registers_per_thread", std::to_string(a.registers_per_thread));
        e.args.emplace_back("shared_memory_bytes",
                            std::to_string(a.static_smem_bytes + a.dynamic_smem_bytes));
      } else {
        e.args.emplace_back("bytes", std::to_string(a.bytes));
      }
      trace.events.push_back(std::move(e));
    }
  }
  std::stable_sort(
      trace.events.begin(), trace.events.end(),
      [](const TraceEvent& a, const TraceEvent& b) { return a.start_us < b.start_us; });
  return trace;
}

}  // namespace attnbench
