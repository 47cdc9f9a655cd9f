#include "base/names.hpp"

#include <algorithm>

namespace attnbench {

template <>
const std::vector<EnumName<DType>>& name_table() {
  static const std::vector<EnumName<DType>> t = {{DType::f16, "fp16"},
                                                 {DType::bf16, "bf16"},
                                                 {DType::f32, "fp32"},
                                                 {DType::fp8_e4m3, "fp8_e4m3"},
                                                 {DType::f16, "float16", true},
                                                 {DType::f16, "half", true},
                                                 {DType::bf16, "bfloat16", true},
                                                 {DType::f32, "float32", true},
                                                 {DType::f32, "float", true},
                                                 {DType::fp8_e4m3, "fp8", true},
                                                 {DType::fp8_e4m3, "float8_e4m3fn", true}};
  return t;
}

template <>
const std::vector<EnumName<Device>>& name_table() {
  static const std::vector<EnumName<Device>> t = {{Device::cpu, "cpu"}, {Device::cuda, "cuda"}};
  return t;
}

template <>
const std::vector<EnumName<Direction>>& name_table() {
  static const std::vector<EnumName<Direction>> t = {{Direction::fwd, "fwd"},
                                                     {Direction::bwd, "bwd"}};
  return t;
}

template <>
const std::vector<EnumName<KvLayout>>& name_table() {
  static const std::vector<EnumName<KvLayout>> t = {{KvLayout::contiguous, "contiguous"},
                                                    {KvLayout::paged, "paged"}};
  return t;
}

template <>
const std::vector<EnumName<PageOrder>>& name_table() {
  static const std::vector<EnumName<PageOrder>> t = {{PageOrder::in_order, "in_order"},
                                                     {PageOrder::shuffled, "shuffled"}};
  return t;
}

template <>
const std::vector<EnumName<TimingMode>>& name_table() {
  static const std::vector<EnumName<TimingMode>> t = {{TimingMode::cold, "cold"},
                                                      {TimingMode::batch, "batch"},
                                                      {TimingMode::graph, "graph"},
                                                      {TimingMode::wall, "wall"}};
  return t;
}

template <>
const std::vector<EnumName<Pass>>& name_table() {
  static const std::vector<EnumName<Pass>> t = {
      {Pass::correctness, "correctness"}, {Pass::timing, "timing"}, {Pass::cpu, "cpu"},
      {Pass::memory, "memory"},           {Pass::ops, "ops"},       {Pass::kernels, "kernels"},
      {Pass::energy, "energy"}};
  return t;
}

template <>
const std::vector<EnumName<PowerMode>>& name_table() {
  static const std::vector<EnumName<PowerMode>> t = {{PowerMode::sustained, "sustained"},
                                                     {PowerMode::burst, "burst"}};
  return t;
}

template <>
const std::vector<EnumName<Status>>& name_table() {
  static const std::vector<EnumName<Status>> t = {
      {Status::ok, "ok"},          {Status::unsupported, "unsupported"},
      {Status::wrong, "wrong"},    {Status::error, "error"},
      {Status::oom, "oom"},        {Status::crashed, "crashed"},
      {Status::timeout, "timeout"}};
  return t;
}

template <>
const std::vector<EnumName<Flag>>& name_table() {
  static const std::vector<EnumName<Flag>> t = {
      {Flag::noise_target_missed, "noise_target_missed"},
      {Flag::kernel_set_varies, "kernel_set_varies"},
      {Flag::above_peak, "above_peak"},
      {Flag::above_bandwidth, "above_bandwidth"},
      {Flag::clock_throttled, "clock_throttled"},
      {Flag::clock_not_recovered, "clock_not_recovered"},
      {Flag::clock_held_by_call, "clock_held_by_call"},
      {Flag::untimed_gpu_work, "untimed_gpu_work"},
      {Flag::leaked_device_memory, "leaked_device_memory"},
      {Flag::ended_a_worker, "ended_a_worker"},
      {Flag::kept_input_sized_state, "kept_input_sized_state"},
      {Flag::variant_not_checked, "variant_not_checked"},
      {Flag::host_clock_differs, "host_clock_differs"},
      {Flag::host_preempted, "host_preempted"}};
  return t;
}

const char* flag_doc(Flag flag) {
  switch (flag) {
    case Flag::noise_target_missed:
      return "the timing pass stopped at max_time_s or max_samples before time_rel_noise reached "
             "target_rel_noise";
    case Flag::kernel_set_varies: return "calls launched different kernels (the notes say how)";
    case Flag::above_peak: return "over 100% of the matmul peak: implausible, check the timing";
    case Flag::above_bandwidth:
      return "over 100% of the measured memory bandwidth (gbytes is a lower bound of what the call "
             "moves, so this is implausible unless part of it stayed in L2): check the timing";
    case Flag::clock_throttled:
      return "the SM clock fell by more than 3% during the timing pass (power, heat): the times "
             "are of a slower GPU";
    case Flag::clock_not_recovered:
      return "power burst: the SM clock was not back at its maximum within cooldown_max_s of rest; "
             "the samples after that were kept at the lower clock (sm_clock_mhz_median says which)";
    case Flag::clock_held_by_call:
      return "power burst: even after the longest rest (1 s) the call's mean SM clock stayed more "
             "than 3% below the maximum: a call this heavy brings the clock down within itself. "
             "The samples were held to the clock a rested GPU runs it at (sm_clock_mhz_median), "
             "as a published table of a few iterations is";
    case Flag::untimed_gpu_work:
      return "the kernels pass saw more GPU time per call (gpu_us_per_call) than the timed events "
             "did, beyond their noise: work on a stream the timing did not cover. time_ms_* are "
             "then the kernels pass's GPU time per call (gpu_us_per_call), tflops with them";
    case Flag::leaked_device_memory:
      return "this (point, backend) kept over 1 GiB, with its objects freed and the cache "
             "emptied: reserved by PyTorch's allocator beyond what it held before (reserved_left_mib) "
             "or gone from the device's free memory (device_mem_left_mib): memory the backend, a "
             "graph it made or a library's own allocation kept; or its calls took memory call "
             "after call (device_mem_grown_mib: 16 MiB or more, at least 0.5 MiB a call), a leak "
             "of any size. It would make later rows oom, so the next (point, backend) ran in a "
             "new worker";
    case Flag::ended_a_worker:
      return "a worker that had measured this backend ended later, during another backend's "
             "measurement, which was fine measured again in a fresh worker: the ending is charged "
             "to this backend (a thread or a timer its code left running, say; the log names the "
             "measurement). From then on each of its (point, backend)s ran in a worker that "
             "retired after it, so that nothing it leaves running reaches another backend";
    case Flag::kept_input_sized_state:
      return "the backend held device memory between calls (device_mem_kept_mib, its result let "
             "go) of at least half its k and v and 256 MiB or more: state the size of its inputs, "
             "such as a gathered copy of a paged cache. The timed calls' inputs move before each "
             "sample, so an output served from it reads `wrong`; an honest one pays for it in "
             "memory a serving engine does not have";
    case Flag::variant_not_checked:
      return "a check of the point's kind or variants (variant_moves lists them) moves the "
             "reference by less than 4 tolerances here: a window or chunk wider than the "
             "sequences, say. The row cannot tell whether the backend applies it";
    case Flag::host_clock_differs:
      return "compare, host time: the two rows' worker cores ran at clocks (host_mhz) more than "
             "5% apart";
    case Flag::host_preempted:
      return "compare, host time: more than 0.1 preemptions per call on a side";
  }
  return "";
}

template <>
const std::vector<EnumName<ActivityKind>>& name_table() {
  static const std::vector<EnumName<ActivityKind>> t = {{ActivityKind::kernel, "kernel"},
                                                        {ActivityKind::memcpy, "memcpy"},
                                                        {ActivityKind::memset, "memset"}};
  return t;
}

template <>
const std::vector<EnumName<Verdict>>& name_table() {
  static const std::vector<EnumName<Verdict>> t = {{Verdict::same, "same"},
                                                   {Verdict::unsure, "unsure"},
                                                   {Verdict::better, "better"},
                                                   {Verdict::worse, "worse"},
                                                   {Verdict::not_comparable, "n/a"}};
  return t;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> out;
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find(separator, start), text.size());
    out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string op_name(std::string name) {
  if (name.rfind("aten::", 0) == 0) name.erase(0, 6);
  return name;
}

std::string one_of(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

}  // namespace attnbench
