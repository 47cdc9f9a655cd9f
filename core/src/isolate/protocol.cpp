#include "isolate/protocol.hpp"

#include "base/names.hpp"
#include "kinds/variant.hpp"
#include "records/fields.hpp"

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

// A path travels byte for byte: a JSON string when it is UTF-8, else {"hex": its bytes} (`line`
// would replace what is not UTF-8 with U+FFFD, and the worker would open another file).
json path_json(const std::string& path) {
  try {
    (void)json(path).dump();  // throws on bytes that are not UTF-8
    return path;
  } catch (const json::type_error&) {
    static const char* digits = "0123456789abcdef";
    std::string hex;
    for (unsigned char c : path) hex += {digits[c >> 4], digits[c & 15]};
    return json{{"hex", hex}};
  }
}
std::string path_from(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  const std::string hex = j.at("hex").get<std::string>();
  if (hex.size() % 2 || hex.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw std::runtime_error("a path's hex is not pairs of hex digits");
  std::string path;
  for (size_t i = 0; i < hex.size(); i += 2)
    path += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return path;
}

}  // namespace

namespace {

json value_json(const FieldValue& v) {
  struct {
    json operator()(std::monostate) const { return nullptr; }
    json operator()(const std::string& s) const { return s; }
    json operator()(int64_t i) const { return i; }
    json operator()(double d) const { return d; }
    json operator()(bool b) const { return b; }
    json operator()(const std::vector<std::string>& names) const { return names; }
  } visit;
  return std::visit(visit, v);
}

FieldValue json_value(FieldType type, const json& j) {
  if (j.is_null()) return {};
  switch (type) {
    case FieldType::text:
    case FieldType::choice: return j.get<std::string>();
    case FieldType::integer: return j.get<int64_t>();
    case FieldType::number: return j.get<double>();
    case FieldType::boolean: return j.get<bool>();
    case FieldType::list: return j.get<std::vector<std::string>>();
  }
  return {};
}

// Every field of the record's table, by name: a field added to the table travels without a line
// here (protocol_test round-trips a record with every field set).
template <class R>
json record_json(const std::vector<Field<R>>& fields, const R& r) {
  json j = json::object();
  for (const auto& f : fields) j[f.name] = value_json(f.get(r));
  return j;
}
template <class R>
void record_from_json(const std::vector<Field<R>>& fields, const json& j, R& r) {
  for (const auto& f : fields) {
    try {
      f.set(r, json_value(f.type, j.at(f.name)));
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error("field '" + f.name + "': " + e.what());
    }
  }
}

std::vector<Field<MeasureSettings>> settings_fields() {
  std::vector<Field<MeasureSettings>> out;
  for (const auto& s : measure_settings_fields()) out.push_back(s.field);
  return out;
}

}  // namespace

// The fields of the table, and the lengths drawn from seq_lens and seq_lens_kv (not axes: the
// main process draws them once, so every worker measures the same batch).
void to_json(json& j, const Problem& p) {
  j = record_json(problem_fields(), p);
  if (!p.q_lens.empty()) j["q_lens"] = p.q_lens;
  if (!p.kv_lens.empty()) j["kv_lens"] = p.kv_lens;
}
void from_json(const json& j, Problem& p) {
  record_from_json(problem_fields(), j, p);
  if (j.contains("q_lens")) j.at("q_lens").get_to(p.q_lens);
  if (j.contains("kv_lens")) j.at("kv_lens").get_to(p.kv_lens);
  mark_variants(p);
}
void to_json(json& j, const MeasureSettings& m) { j = record_json(settings_fields(), m); }
void from_json(const json& j, MeasureSettings& m) { record_from_json(settings_fields(), j, m); }
void to_json(json& j, const Row& r) { j = record_json(row_fields(), r); }
void from_json(const json& j, Row& r) { record_from_json(row_fields(), j, r); }
void to_json(json& j, const KernelRow& k) {
  j = record_json(kernel_row_fields(), k);
  j["run"] = record_json(run_info_fields(), k.run);  // the kernel CSV writes only part of it
}
void from_json(const json& j, KernelRow& k) {
  record_from_json(kernel_row_fields(), j, k);
  record_from_json(run_info_fields(), j.at("run"), k.run);
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
    samples.push_back(
        {{"mode", to_string(s.mode)}, {"time_ms", s.time_ms}, {"sm_clock_mhz", s.sm_clock_mhz}});
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
    b.samples.push_back({enum_at<TimingMode>(s, "mode"), s.at("time_ms").get<std::vector<double>>(),
                         s.at("sm_clock_mhz").get<std::vector<double>>()});
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
    backends.push_back({{"name", b.name},
                        {"description", b.description},
                        {"file", path_json(b.file)},
                        {"build", b.build}});
  for (const auto& f : h.failures)
    failures.push_back({{"file", path_json(f.file)},
                        {"reason", f.reason},
                        {"duplicate", f.duplicate},
                        {"kind", f.kind},
                        {"config_error", f.config_error},
                        {"lost_backend", f.lost_backend}});
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
  json options = {{"measurement", o.measurement},
                  {"tolerance", tolerance},
                  {"seed", o.seed},
                  {"info", record_json(run_info_fields(), o.info)}};
  put(options, "peak_tflops", o.peak_tflops);
  put(options, "peak_tflops_fp8", o.peak_tflops_fp8);
  put(options, "bandwidth_gbps", o.bandwidth_gbps);
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
std::string loading_message(const std::string& kind, const std::string& id,
                            const std::string& backend) {
  return line(
      json{{"type", "loading"}, {"kind", kind}, {"name", path_json(id)}, {"backend", backend}});
}

std::string backend_spec_arg(const BackendSpec& spec) {
  return line(json{{"kind", spec.kind},
                   {"name", spec.name},
                   {"target", path_json(spec.target)},
                   {"written", path_json(spec.written)},
                   {"library", path_json(spec.library)}});
}

BackendSpec parse_backend_spec_arg(const std::string& arg) {
  try {
    const json j = json::parse(arg);
    BackendSpec spec;
    spec.kind = j.at("kind"), spec.name = j.at("name"), spec.target = path_from(j.at("target"));
    spec.written = path_from(j.at("written")), spec.library = path_from(j.at("library"));
    if (!find_backend_kind(spec.kind))
      throw std::invalid_argument("no backend kind '" + spec.kind + "'");
    return spec;
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("--backend expects a backend's JSON: ") + e.what());
  } catch (const std::runtime_error& e) {  // a path's hex that is not hex
    throw std::invalid_argument(std::string("--backend: ") + e.what());
  }
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
        m.hello.backends.push_back(
            {b.at("name"), b.at("description"), path_from(b.at("file")), b.at("build")});
      for (const auto& f : j.at("failures")) {
        LoadFailure failure{path_from(f.at("file")), f.at("reason"), f.at("kind")};
        failure.duplicate = f.at("duplicate");
        failure.config_error = f.at("config_error");
        failure.lost_backend = f.at("lost_backend");
        m.hello.failures.push_back(std::move(failure));
      }
    } else if (m.type == "setup") {
      const json& o = j.at("options");
      m.options.measurement = o.at("measurement");
      m.options.tolerance.clear();
      for (const auto& [name, limit] : o.at("tolerance").items()) {
        const auto dtype = parse_enum<DType>(name);
        if (!dtype) throw std::runtime_error("unknown dtype '" + name + "'");
        m.options.tolerance[*dtype] = limit.get<double>();
      }
      m.options.seed = o.at("seed");
      record_from_json(run_info_fields(), o.at("info"), m.options.info);
      get(o, "peak_tflops", m.options.peak_tflops);
      get(o, "peak_tflops_fp8", m.options.peak_tflops_fp8);
      get(o, "bandwidth_gbps", m.options.bandwidth_gbps);
    } else if (m.type == "measure") {
      m.point.id = j.at("point").at("id");
      m.point.problem = j.at("point").at("problem");
      m.backend = j.at("backend");
    } else if (m.type == "pass") {
      m.name = j.at("name");
    } else if (m.type == "loading") {
      m.kind = j.at("kind"), m.name = path_from(j.at("name")), m.backend = j.at("backend");
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
