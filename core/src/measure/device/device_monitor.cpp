#include "measure/device/device_monitor.hpp"

#include <dlfcn.h>

#ifdef ATTNBENCH_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace attnbench {

namespace {

// The few entry points of NVML's stable C API that are used, as nvml.h declares them.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlInsufficientSize = 7;  // NVML_ERROR_INSUFFICIENT_SIZE
constexpr int kNvmlClockSm = 1;                    // NVML_CLOCK_SM
constexpr int kNvmlTemperatureGpu = 0;             // NVML_TEMPERATURE_GPU

}  // namespace

struct DeviceMonitor::Nvml {
  void* library = nullptr;
  nvmlDevice_t device = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;  // optional, as energy
  nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  // nvmlViolationTime_t: a CPU timestamp (us) and the time (ns) a limiter held the clocks down.
  struct ViolationTime {
    unsigned long long reference_us, violation_ns;
  };
  nvmlReturn_t (*violation)(nvmlDevice_t, int, ViolationTime*) = nullptr;  // optional
  // Asked with no array, it says only how many (every version of the call agrees on that).
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned*, void*) = nullptr;  // optional

  ~Nvml() {
    if (shutdown) shutdown();
    if (library) dlclose(library);
  }
};

DeviceMonitor::DeviceMonitor(int cuda_device) {
#ifdef ATTNBENCH_WITH_CUDA
  char bus_id[64] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, cuda_device) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  auto n = std::make_unique<Nvml>();
  n->library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!n->library) return;
  auto symbol = [&](const char* name) { return dlsym(n->library, name); };
  auto init = reinterpret_cast<nvmlReturn_t (*)()>(symbol("nvmlInit_v2"));
  auto by_bus = reinterpret_cast<nvmlReturn_t (*)(const char*, nvmlDevice_t*)>(
      symbol("nvmlDeviceGetHandleByPciBusId_v2"));
  n->clock = reinterpret_cast<decltype(n->clock)>(symbol("nvmlDeviceGetClockInfo"));
  n->power = reinterpret_cast<decltype(n->power)>(symbol("nvmlDeviceGetPowerUsage"));
  n->temperature = reinterpret_cast<decltype(n->temperature)>(symbol("nvmlDeviceGetTemperature"));
  n->max_clock = reinterpret_cast<decltype(n->max_clock)>(symbol("nvmlDeviceGetMaxClockInfo"));
  n->energy = reinterpret_cast<decltype(n->energy)>(symbol("nvmlDeviceGetTotalEnergyConsumption"));
  if (!init || !by_bus || !n->clock || !n->power || !n->temperature) return;
  if (init() != kNvmlSuccess) return;
  n->violation = reinterpret_cast<decltype(n->violation)>(symbol("nvmlDeviceGetViolationStatus"));
  n->shutdown = reinterpret_cast<nvmlReturn_t (*)()>(symbol("nvmlShutdown"));
  for (const char* name :
       {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses"})
    if (!n->processes) n->processes = reinterpret_cast<decltype(n->processes)>(symbol(name));
  if (by_bus(bus_id, &n->device) != kNvmlSuccess) return;
  nvml_ = std::move(n);
#else
  (void)cuda_device;
#endif
}

DeviceMonitor::~DeviceMonitor() = default;

std::optional<DeviceState> DeviceMonitor::read() const {
  const std::optional<double> clock = sm_clock_mhz();
  unsigned milliwatts = 0, celsius = 0;
  if (!clock || nvml_->power(nvml_->device, &milliwatts) != kNvmlSuccess ||
      nvml_->temperature(nvml_->device, kNvmlTemperatureGpu, &celsius) != kNvmlSuccess)
    return std::nullopt;
  DeviceState state{*clock, milliwatts / 1000.0, static_cast<double>(celsius)};
  // NVML_PERF_POLICY_POWER and _THERMAL: time held below the application clocks by each.
  Nvml::ViolationTime power{}, thermal{};
  if (nvml_->violation && nvml_->violation(nvml_->device, 0, &power) == kNvmlSuccess &&
      nvml_->violation(nvml_->device, 1, &thermal) == kNvmlSuccess)
    state.limited_ms = (power.violation_ns + thermal.violation_ns) / 1e6;
  return state;
}

std::optional<double> DeviceMonitor::sm_clock_mhz() const {
  unsigned clock = 0;
  if (!nvml_ || nvml_->clock(nvml_->device, kNvmlClockSm, &clock) != kNvmlSuccess)
    return std::nullopt;
  return static_cast<double>(clock);
}

std::optional<double> DeviceMonitor::max_sm_clock_mhz() const {
  unsigned clock = 0;
  if (!nvml_ || !nvml_->max_clock ||
      nvml_->max_clock(nvml_->device, kNvmlClockSm, &clock) != kNvmlSuccess || clock == 0)
    return std::nullopt;
  return static_cast<double>(clock);
}

std::optional<unsigned long long> DeviceMonitor::energy_mj() const {
  unsigned long long mj = 0;
  if (!nvml_ || !nvml_->energy || nvml_->energy(nvml_->device, &mj) != kNvmlSuccess)
    return std::nullopt;
  return mj;
}

bool DeviceMonitor::shared_with_another_process() const {
  unsigned count = 0;  // this process included
  if (!nvml_ || !nvml_->processes) return false;
  const nvmlReturn_t rc = nvml_->processes(nvml_->device, &count, nullptr);
  return (rc == kNvmlSuccess || rc == kNvmlInsufficientSize) && count > 1;
}

}  // namespace attnbench
