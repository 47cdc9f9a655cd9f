#include "isolate/protocol.hpp"

#include "base/names.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace attnbench {

using json = nlohmann::json;

namespace {

template <class T>
void put(json& j, const char* key, const std::optional<T>& v) {
  j[key] = v ? json(*v) : json(nullptr);
}
template <class T>
void get(const json& j, const char* key, std::optional<T>& v) {
  const json& x = j.at(key);
  if (x.is_null())
    v.reset();
  else
    v = x.get<T>();
}
template <class E>
E enum_at(const json& j, const char* key) {
  const std::string text = j.at(key).get<std::string>();
  const auto value = parse_enum<E>(text);
  if (!value) throw std::runtime_error(std::string("unknown ") + key + " '" + text + "'");
  return *value;
}

// Plugins' messages may hold bytes that are not UTF-8: replaced, never a reason to fail.
std::string line(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

void to_json(json& j, const Problem& p) {
  j = {{"batch", p.batch},
       {"heads", p.heads},
       {"kv_heads", p.kv_heads},
       {"seq_len", p.seq_len},
       {"seq_len_kv", p.seq_len_kv},
       {"head_dim", p.head_dim},
       {"dtype", to_string(p.dtype)},
       {"causal", p.causal},
       {"device", to_string(p.device)},
       {"direction", to_string(p.direction)}};
}
void from_json(const json& j, Problem& p) {
  p.batch = j.at("batch"), p.heads = j.at("heads"), p.kv_heads = j.at("kv_heads");
  p.seq_len = j.at("seq_len"), p.seq_len_kv = j.at("seq_len_kv");
  p.head_dim = j.at("head_dim"), p.causal = j.at("causal");
  p.dtype = enum_at<DType>(j, "dtype");
  p.device = enum_at<Device>(j, "device");
  p.direction = enum_at<Direction>(j, "direction");
}

void to_json(json& j, const RunInfo& r) {
  j = {{"device_name", r.device_name},
       {"torch_version", r.torch_version},
       {"git_sha", r.git_sha},
       {"started_at", r.started_at},
       {"config_file", r.config_file},
       {"config_fingerprint", r.config_fingerprint},
       {"shard", r.shard}};
}
void from_json(const json& j, RunInfo& r) {
  r.device_name = j.at("device_name"), r.torch_version = j.at("torch_version");
  r.git_sha = j.at("git_sha"), r.started_at = j.at("started_at"),
  r.config_file = j.at("config_file");
  r.config_fingerprint = j.at("config_fingerprint");
  r.shard = j.value("shard", "");
}

void to_json(json& j, const MeasureSettings& m) {
  std::vector<std::string> modes, passes;
  for (auto x : m.timing_modes) modes.push_back(to_string(x));
  for (auto x : m.passes) passes.push_back(to_string(x));
  j = {{"warmup_ms", m.warmup_ms},
       {"min_samples", m.min_samples},
       {"max_samples", m.max_samples},
       {"min_time_s", m.min_time_s},
       {"max_time_s", m.max_time_s},
       {"target_rel_noise", m.target_rel_noise},
       {"timing_modes", modes},
       {"batch_sample_ms", m.batch_sample_ms},
       {"kernel_pass_iterations", m.kernel_pass_iterations},
       {"cpu_pass_calls", m.cpu_pass_calls},
       {"keep_samples", m.keep_samples},
       {"timeout_s", m.timeout_s},
       {"repetitions", m.repetitions},
       {"trace", m.trace},
       {"passes", passes}};
}
void from_json(const json& j, MeasureSettings& m) {
  m.warmup_ms = j.at("warmup_ms"), m.min_samples = j.at("min_samples"),
  m.max_samples = j.at("max_samples");
  m.min_time_s = j.at("min_time_s"), m.max_time_s = j.at("max_time_s");
  m.target_rel_noise = j.at("target_rel_noise"), m.batch_sample_ms = j.at("batch_sample_ms");
  m.kernel_pass_iterations = j.at("kernel_pass_iterations"),
  m.cpu_pass_calls = j.at("cpu_pass_calls");
  m.keep_samples = j.at("keep_samples"), m.timeout_s = j.at("timeout_s");
  m.repetitions = j.value("repetitions", 1);
  m.trace = j.value("trace", false);
  m.timing_modes = parse_timing_modes(j.at("timing_modes").get<std::vector<std::string>>());
  m.passes = parse_passes(j.at("passes").get<std::vector<std::string>>());
}

void to_json(json& j, const Row& r) {
  j = {{"point_id", r.point_id},
       {"backend", r.backend},
       {"problem", r.problem},
       {"timing_mode", to_string(r.timing_mode)},
       {"status", to_string(r.status)},
       {"reason", r.reason},
       {"aten_ops", r.aten_ops},
       {"flags", r.flags},
       {"run", r.run}};
  put(j, "time_ms_median", r.time_ms_median), put(j, "time_ms_p10", r.time_ms_p10);
  put(j, "time_ms_p90", r.time_ms_p90), put(j, "time_rel_spread", r.time_rel_spread);
  put(j, "time_rel_noise", r.time_rel_noise), put(j, "samples", r.samples);
  put(j, "calls_per_sample", r.calls_per_sample), put(j, "cpu_us_median", r.cpu_us_median);
  put(j, "cpu_us_p10", r.cpu_us_p10), put(j, "cpu_us_p90", r.cpu_us_p90);
  put(j, "host_mhz", r.host_mhz), put(j, "host_preempted_per_call", r.host_preempted_per_call);
  put(j, "host_migrated_per_call", r.host_migrated_per_call);
  put(j, "aten_ops_per_call", r.aten_ops_per_call);
  put(j, "aten_ops_nested_per_call", r.aten_ops_nested_per_call);
  put(j, "aten_copies_per_call", r.aten_copies_per_call);
  put(j, "kernels_per_call", r.kernels_per_call), put(j, "memcpy_per_call", r.memcpy_per_call);
  put(j, "memset_per_call", r.memset_per_call), put(j, "peak_mem_mib", r.peak_mem_mib);
  put(j, "occupancy_pct", r.occupancy_pct);
  put(j, "rel_err", r.rel_err), put(j, "tolerance", r.tolerance), put(j, "gflop", r.gflop);
  put(j, "tflops", r.tflops), put(j, "pct_of_peak", r.pct_of_peak);
  j["repetition"] = r.repetition;
  put(j, "sm_clock_mhz_start", r.sm_clock_mhz_start),
      put(j, "sm_clock_mhz_end", r.sm_clock_mhz_end);
  put(j, "power_w", r.power_w), put(j, "temperature_c", r.temperature_c);
}
void from_json(const json& j, Row& r) {
  r.point_id = j.at("point_id"), r.backend = j.at("backend"), r.problem = j.at("problem");
  r.timing_mode = enum_at<TimingMode>(j, "timing_mode");
  r.status = enum_at<Status>(j, "status");
  r.reason = j.at("reason"), r.aten_ops = j.at("aten_ops"), r.flags = j.at("flags"),
  r.run = j.at("run");
  get(j, "time_ms_median", r.time_ms_median), get(j, "time_ms_p10", r.time_ms_p10);
  get(j, "time_ms_p90", r.time_ms_p90), get(j, "time_rel_spread", r.time_rel_spread);
  get(j, "time_rel_noise", r.time_rel_noise), get(j, "samples", r.samples);
  get(j, "calls_per_sample", r.calls_per_sample), get(j, "cpu_us_median", r.cpu_us_median);
  get(j, "cpu_us_p10", r.cpu_us_p10), get(j, "cpu_us_p90", r.cpu_us_p90);
  get(j, "host_mhz", r.host_mhz), get(j, "host_preempted_per_call", r.host_preempted_per_call);
  get(j, "host_migrated_per_call", r.host_migrated_per_call);
  get(j, "aten_ops_per_call", r.aten_ops_per_call);
  get(j, "aten_ops_nested_per_call", r.aten_ops_nested_per_call);
  get(j, "aten_copies_per_call", r.aten_copies_per_call);
  get(j, "kernels_per_call", r.kernels_per_call), get(j, "memcpy_per_call", r.memcpy_per_call);
  get(j, "memset_per_call", r.memset_per_call), get(j, "peak_mem_mib", r.peak_mem_mib);
  get(j, "occupancy_pct", r.occupancy_pct);
  get(j, "rel_err", r.rel_err), get(j, "tolerance", r.tolerance), get(j, "gflop", r.gflop);
  get(j, "tflops", r.tflops), get(j, "pct_of_peak", r.pct_of_peak);
  r.repetition = j.value("repetition", 0);
  get(j, "sm_clock_mhz_start", r.sm_clock_mhz_start),
      get(j, "sm_clock_mhz_end", r.sm_clock_mhz_end);
  get(j, "power_w", r.power_w), get(j, "temperature_c", r.temperature_c);
}

void to_json(json& j, const KernelRow& k) {
  j = {{"point_id", k.point_id},
       {"backend", k.backend},
       {"kind", to_string(k.kind)},
       {"name", k.name},
       {"launches_per_call", k.launches_per_call},
       {"duration_us_mean", k.duration_us_mean},
       {"grid", k.grid},
       {"block", k.block},
       {"run", k.run}};
  put(j, "registers_per_thread", k.registers_per_thread);
  put(j, "static_smem_bytes", k.static_smem_bytes),
      put(j, "dynamic_smem_bytes", k.dynamic_smem_bytes);
  put(j, "theoretical_occupancy_pct", k.theoretical_occupancy_pct), put(j, "bytes", k.bytes);
}
void from_json(const json& j, KernelRow& k) {
  k.point_id = j.at("point_id"), k.backend = j.at("backend"),
  k.kind = enum_at<ActivityKind>(j, "kind");
  k.name = j.at("name"), k.launches_per_call = j.at("launches_per_call");
  k.duration_us_mean = j.at("duration_us_mean"), k.grid = j.at("grid"), k.block = j.at("block");
  k.run = j.at("run");
  get(j, "registers_per_thread", k.registers_per_thread);
  get(j, "static_smem_bytes", k.static_smem_bytes),
      get(j, "dynamic_smem_bytes", k.dynamic_smem_bytes);
  get(j, "theoretical_occupancy_pct", k.theoretical_occupancy_pct), get(j, "bytes", k.bytes);
}

void to_json(json& j, const TraceEvent& e) {
  j = {{"name", e.name},   {"category", e.category}, {"gpu", e.lane == TraceLane::gpu},
       {"track", e.track}, {"start_us", e.start_us}, {"duration_us", e.duration_us},
       {"flow", e.flow},   {"args", e.args}};
}
void from_json(const json& j, TraceEvent& e) {
  e.name = j.at("name"), e.category = j.at("category");
  e.lane = j.at("gpu").get<bool>() ? TraceLane::gpu : TraceLane::host;
  e.track = j.at("track"), e.start_us = j.at("start_us"), e.duration_us = j.at("duration_us");
  e.flow = j.at("flow");
  e.args = j.at("args").get<std::vector<std::pair<std::string, std::string>>>();
}

void to_json(json& j, const BackendRecords& b) {
  json samples = json::array();
  for (const auto& s : b.samples)
    samples.push_back({{"mode", to_string(s.mode)}, {"time_ms", s.time_ms}});
  j = {{"point_id", b.point_id}, {"backend", b.backend}, {"rows", b.rows},
       {"kernels", b.kernels},   {"samples", samples},   {"notes", b.notes}};
  if (b.trace) {
    json tracks = json::object();
    for (const auto& [track, name] : b.trace->host_tracks) tracks[std::to_string(track)] = name;
    j["trace"] = {{"calls", b.trace->calls}, {"events", b.trace->events}, {"host_tracks", tracks}};
  }
}
void from_json(const json& j, BackendRecords& b) {
  b.point_id = j.at("point_id"), b.backend = j.at("backend");
  b.rows = j.at("rows").get<std::vector<Row>>();
  b.kernels = j.at("kernels").get<std::vector<KernelRow>>();
  b.samples.clear();
  for (const auto& s : j.at("samples"))
    b.samples.push_back(
        {enum_at<TimingMode>(s, "mode"), s.at("time_ms").get<std::vector<double>>()});
  b.notes = j.at("notes");
  b.trace.reset();
  if (j.contains("trace")) {
    const json& t = j.at("trace");
    Trace trace;
    trace.calls = t.at("calls");
    trace.events = t.at("events").get<std::vector<TraceEvent>>();
    for (const auto& [track, name] : t.at("host_tracks").items())
      trace.host_tracks[std::stoull(track)] = name.get<std::string>();
    b.trace = std::move(trace);
  }
}

std::string hello_message(const Hello& h) {
  json backends = json::array(), failures = json::array();
  for (const auto& b : h.backends)
    backends.push_back({{"name", b.name}, {"description", b.description}, {"file", b.file}});
  for (const auto& f : h.failures)
    failures.push_back({{"file", f.file}, {"reason", f.reason}, {"duplicate", f.duplicate}});
  return line(json{{"type", "hello"},
                   {"host",
                    {{"cuda_available", h.host.cuda_available},
                     {"cuda_device", h.host.cuda_device},
                     {"cuda_device_count", h.host.cuda_device_count},
                     {"device_name", h.host.device_name},
                     {"torch_version", h.host.torch_version},
                     {"l2_cache_bytes", h.host.l2_cache_bytes}}},
                   {"backends", backends},
                   {"failures", failures}});
}

std::string setup_message(const RunOptions& o) {
  json tolerance = json::object();
  for (const auto& [dtype, limit] : o.tolerance) tolerance[to_string(dtype)] = limit;
  json options = {
      {"measurement", o.measurement}, {"tolerance", tolerance}, {"seed", o.seed}, {"info", o.info}};
  put(options, "peak_tflops", o.peak_tflops);
  return line(json{{"type", "setup"}, {"options", options}});
}

std::string measure_message(const Point& point, const std::string& backend) {
  return line(json{{"type", "measure"},
                   {"point", {{"id", point.id}, {"problem", point.problem}}},
                   {"backend", backend}});
}

std::string pass_message(const std::string& name) {
  return line(json{{"type", "pass"}, {"name", name}});
}
std::string records_message(const BackendRecords& r) {
  return line(json{{"type", "records"}, {"records", r}});
}
std::string fatal_message(const std::string& reason) {
  return line(json{{"type", "fatal"}, {"reason", reason}});
}
std::string quit_message() { return line(json{{"type", "quit"}}); }

Message parse_message(const std::string& line) {
  Message m;
  try {
    const json j = json::parse(line);
    m.type = j.at("type");
    if (m.type == "hello") {
      const json& h = j.at("host");
      m.hello.host.cuda_available = h.at("cuda_available"),
      m.hello.host.cuda_device = h.at("cuda_device");
      m.hello.host.cuda_device_count = h.value("cuda_device_count", 0);
      m.hello.host.device_name = h.at("device_name"),
      m.hello.host.torch_version = h.at("torch_version");
      m.hello.host.l2_cache_bytes = h.at("l2_cache_bytes");
      for (const auto& b : j.at("backends"))
        m.hello.backends.push_back({b.at("name"), b.at("description"), b.at("file")});
      for (const auto& f : j.at("failures"))
        m.hello.failures.push_back({f.at("file"), f.at("reason"), f.value("duplicate", false)});
    } else if (m.type == "setup") {
      const json& o = j.at("options");
      m.options.measurement = o.at("measurement");
      m.options.tolerance.clear();
      for (const auto& [name, limit] : o.at("tolerance").items()) {
        const auto dtype = parse_enum<DType>(name);
        if (!dtype) throw std::runtime_error("unknown dtype '" + name + "'");
        m.options.tolerance[*dtype] = limit.get<double>();
      }
      m.options.seed = o.at("seed"), m.options.info = o.at("info");
      get(o, "peak_tflops", m.options.peak_tflops);
    } else if (m.type == "measure") {
      m.point.id = j.at("point").at("id");
      m.point.problem = j.at("point").at("problem");
      m.backend = j.at("backend");
    } else if (m.type == "pass") {
      m.name = j.at("name");
    } else if (m.type == "records") {
      m.records = j.at("records");
    } else if (m.type == "fatal") {
      m.reason = j.at("reason");
    } else if (m.type != "quit") {
      throw std::runtime_error("unknown message type '" + m.type + "'");
    }
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("not a worker message: ") + e.what());
  }
  return m;
}

}  // namespace attnbench
