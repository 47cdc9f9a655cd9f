#include "measure/device/cupti_tracer.hpp"

#include "base/names.hpp"
#include "base/time.hpp"

#include <stdexcept>

#ifdef ATTNBENCH_WITH_CUPTI
#include <cuda_occupancy.h>
#include <cupti.h>
#include <cxxabi.h>
#include "measure/device/cuda_check.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#endif

namespace attnbench {

#ifndef ATTNBENCH_WITH_CUPTI

bool cupti_attached() { return false; }
bool cupti_available() { return false; }
GpuTrace trace_gpu_activity(const std::function<void()>&, int, bool) {
  throw std::runtime_error("this attnbench was built without CUPTI");
}
std::optional<double> theoretical_occupancy_pct(const GpuActivity&, int) { return std::nullopt; }

#else

namespace {

void check(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  throw std::runtime_error(std::string("CUPTI ") + what + ": " + (text ? text : "unknown error"));
}

std::mutex g_mutex;
std::vector<GpuActivity> g_records;
std::vector<ApiCall> g_api_calls;
bool g_attached = false;

std::string demangle(const char* name) {
  if (!name) return "?";
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || !out) return name;  // cuDNN's generated kernels are not mangled
  std::string result(out);
  std::free(out);
  return result;
}

const char* copy_kind(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "memcpy PtoP";
    default: return "memcpy";
  }
}

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel".
std::string api_name(CUpti_CallbackDomain domain, uint32_t cbid) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) return "?";
  std::string s(name);
  if (const auto v = s.rfind("_v"); v != std::string::npos && v + 2 < s.size() &&
                                    std::all_of(s.begin() + v + 2, s.end(), ::isdigit))
    s.erase(v);
  return s;
}

constexpr size_t kBufferBytes = 8 << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::vector<GpuActivity> parsed;
  std::vector<ApiCall> calls;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    GpuActivity a;
    if (record->kind == CUPTI_ACTIVITY_KIND_RUNTIME || record->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
      const auto* c = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      calls.push_back(
          {api_name(record->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API
                                                                : CUPTI_CB_DOMAIN_DRIVER_API,
                    c->cbid),
           c->start, c->end, c->threadId, c->correlationId});
      continue;
    }
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
        record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      a.kind = ActivityKind::kernel;
      a.name = demangle(k->name);
      a.start_ns = k->start;
      a.end_ns = k->end;
      a.grid[0] = k->gridX, a.grid[1] = k->gridY, a.grid[2] = k->gridZ;
      a.block[0] = k->blockX, a.block[1] = k->blockY, a.block[2] = k->blockZ;
      a.registers_per_thread = k->registersPerThread;
      a.static_smem_bytes = k->staticSharedMemory;
      a.dynamic_smem_bytes = k->dynamicSharedMemory;
      a.smem_config_bytes = k->sharedMemoryExecuted;
      a.correlation_id = k->correlationId;
      a.stream_id = k->streamId;
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      a.kind = ActivityKind::memcpy;
      a.name = copy_kind(m->copyKind);
      a.start_ns = m->start;
      a.end_ns = m->end;
      a.bytes = m->bytes;
      a.correlation_id = m->correlationId;
      a.stream_id = m->streamId;
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      a.kind = ActivityKind::memset;
      a.name = "memset";
      a.start_ns = m->start;
      a.end_ns = m->end;
      a.bytes = m->bytes;
      a.correlation_id = m->correlationId;
      a.stream_id = m->streamId;
    } else {
      continue;
    }
    parsed.push_back(std::move(a));
  }
  std::free(buffer);
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& a : parsed) g_records.push_back(std::move(a));
  for (auto& c : calls) g_api_calls.push_back(std::move(c));
}

constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                         CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};
constexpr CUpti_ActivityKind kApiKinds[] = {CUPTI_ACTIVITY_KIND_RUNTIME,
                                            CUPTI_ACTIVITY_KIND_DRIVER};

void attach(bool with_launches) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_records.clear();
    g_api_calls.clear();
  }
  check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "register buffers");
  for (auto kind : kKinds) check(cuptiActivityEnable(kind), "enable activity");
  if (with_launches)
    for (auto kind : kApiKinds) check(cuptiActivityEnable(kind), "enable API activity");
  g_attached = true;
}

void detach() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (auto kind : kKinds) cuptiActivityDisable(kind);
  for (auto kind : kApiKinds) cuptiActivityDisable(kind);
  // Finalize so that no CUPTI callback stays installed: later passes run with no profiler attached.
  check(cuptiFinalize(), "finalize");
  g_attached = false;
}

std::string multiset_text(const std::map<std::string, int>& m) {
  std::string out;
  for (const auto& [name, n] : m)
    out += (out.empty() ? "" : ", ") + std::to_string(n) + "x " + name;
  return out;
}

}  // namespace

bool cupti_attached() { return g_attached; }
bool cupti_available() { return true; }

GpuTrace trace_gpu_activity(const std::function<void()>& call, int iterations, bool with_launches) {
  cuda_check(cudaDeviceSynchronize(), "synchronize before tracing");
  attach(with_launches);
  GpuTrace trace;
  trace.iterations = iterations;
  std::vector<uint64_t> bounds;
  auto now = [&] {
    ClockPair p;
    check(cuptiGetTimestamp(&p.cupti_ns), "timestamp");
    p.steady_ns = steady_now_ns();
    return p;
  };
  try {
    trace.first = now();
    bounds.push_back(trace.first.cupti_ns);
    for (int i = 0; i < iterations; ++i) {
      call();
      cuda_check(cudaDeviceSynchronize(), "synchronize after a traced call");
      trace.last = now();
      bounds.push_back(trace.last.cupti_ns);
    }
  } catch (...) {
    detach();
    throw;
  }
  detach();

  {
    std::lock_guard<std::mutex> lock(g_mutex);
    std::set<uint32_t> launched;
    for (auto& a : g_records) {
      for (int i = 0; i < iterations; ++i)
        if (a.start_ns >= bounds[i] && a.start_ns < bounds[i + 1]) a.iteration = i;
      if (a.iteration < 0) continue;
      launched.insert(a.correlation_id);
      trace.activities.push_back(std::move(a));
    }
    // Only the calls that launched something: the others (cudaGetDevice, event queries, ...) are
    // host bookkeeping, and the CPU lane's ops already cover their time.
    std::set<uint32_t> kept;
    for (auto& c : g_api_calls)
      if (launched.count(c.correlation_id) && kept.insert(c.correlation_id).second)
        trace.launches.push_back(std::move(c));
    g_records.clear();
    g_api_calls.clear();
  }
  std::sort(trace.activities.begin(), trace.activities.end(),
            [](const GpuActivity& x, const GpuActivity& y) { return x.start_ns < y.start_ns; });

  std::vector<std::map<std::string, int> > per_iteration(iterations);
  for (const auto& a : trace.activities)
    per_iteration[a.iteration][to_string(a.kind) + " " + a.name]++;
  for (int i = 1; i < iterations; ++i) {
    if (per_iteration[i] != per_iteration[0]) {
      trace.same_every_iteration = false;
      trace.difference = "call 1: " + multiset_text(per_iteration[0]) + "; call " +
                         std::to_string(i + 1) + ": " + multiset_text(per_iteration[i]);
      break;
    }
  }
  return trace;
}

std::optional<double> theoretical_occupancy_pct(const GpuActivity& k, int device) {
  if (k.kind != ActivityKind::kernel) return std::nullopt;
  static std::map<int, cudaDeviceProp> cache;
  auto it = cache.find(device);
  if (it == cache.end()) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return std::nullopt;
    it = cache.emplace(device, prop).first;
  }
  const cudaDeviceProp& prop = it->second;
  const int threads = k.block[0] * k.block[1] * k.block[2];
  if (threads <= 0) return std::nullopt;

  cudaOccDeviceProp occ_prop(prop);
  cudaOccFuncAttributes attr;
  attr.maxThreadsPerBlock = prop.maxThreadsPerBlock;
  attr.numRegs = k.registers_per_thread;
  attr.sharedSizeBytes = static_cast<size_t>(k.static_smem_bytes);
  attr.partitionedGCConfig = PARTITIONED_GC_OFF;
  attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;  // kernels with >48 KiB dynamic smem opted in
  attr.maxDynamicSharedSizeBytes = prop.sharedMemPerBlockOptin;
  attr.numBlockBarriers = 1;
  cudaOccDeviceState state;
  if (k.smem_config_bytes > 0 &&
      prop.sharedMemPerMultiprocessor > 0)  // the carveout it really ran with
    state.carveoutConfig = static_cast<int>(
        std::lround(100.0 * k.smem_config_bytes / prop.sharedMemPerMultiprocessor));
  cudaOccResult result{};
  if (cudaOccMaxActiveBlocksPerMultiprocessor(&result, &occ_prop, &attr, &state, threads,
                                              static_cast<size_t>(k.dynamic_smem_bytes)) !=
      CUDA_OCC_SUCCESS)
    return std::nullopt;
  const int warps_per_block = (threads + prop.warpSize - 1) / prop.warpSize;
  const int max_warps = prop.maxThreadsPerMultiProcessor / prop.warpSize;
  return 100.0 * result.activeBlocksPerMultiprocessor * warps_per_block / max_warps;
}

#endif

}  // namespace attnbench
