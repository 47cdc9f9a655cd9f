#include "write/trace_json.hpp"

#include "write/report_writer.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>

namespace attnbench {

namespace {

using json = nlohmann::json;

constexpr int kHostPid = 1, kGpuPid = 2;

json metadata(const char* what, int pid, std::optional<uint64_t> tid, const std::string& name) {
  json m = {{"ph", "M"}, {"name", what}, {"pid", pid}, {"args", {{"name", name}}}};
  if (tid) m["tid"] = *tid;
  return m;
}

}  // namespace

std::string chrome_trace_json(const BackendRecords& records) {
  const Trace& trace = *records.trace;
  const RunInfo run = records.rows.empty() ? RunInfo{} : records.rows.front().run;
  json events = json::array();
  events.push_back(metadata("process_name", kHostPid, std::nullopt, "host"));
  for (const auto& [track, name] : trace.host_tracks)
    events.push_back(metadata("thread_name", kHostPid, track, name));
  std::set<uint64_t> streams;
  for (const TraceEvent& e : trace.events)
    if (e.lane == TraceLane::gpu && streams.insert(e.track).second)
      events.push_back(
          metadata("thread_name", kGpuPid, e.track, "stream " + std::to_string(e.track)));
  if (!streams.empty())
    events.push_back(metadata("process_name", kGpuPid, std::nullopt, "GPU: " + run.device_name));

  for (const TraceEvent& e : trace.events) {
    const int pid = e.lane == TraceLane::gpu ? kGpuPid : kHostPid;
    json args = json::object();
    for (const auto& [key, value] : e.args) args[key] = value;
    events.push_back({{"ph", "X"},
                      {"cat", e.category},
                      {"name", e.name},
                      {"pid", pid},
                      {"tid", e.track},
                      {"ts", e.start_us},
                      {"dur", e.duration_us},
                      {"args", args}});
    if (e.flow == 0) continue;
    // The arrow starts at the launch and ends at the kernel, memcpy or memset it launched.
    json flow = {{"cat", "ac2g"}, {"name", "launch"}, {"id", e.flow},
                 {"pid", pid},    {"tid", e.track},   {"ts", e.start_us}};
    if (e.lane == TraceLane::host) {
      flow["ph"] = "s";
    } else {
      flow["ph"] = "f";
      flow["bp"] = "e";
    }
    events.push_back(std::move(flow));
  }
  const json doc = {{"traceEvents", events},
                    {"displayTimeUnit", "ns"},
                    {"otherData",
                     {{"point_id", records.point_id},
                      {"backend", records.backend},
                      {"repetition", records.repetition},
                      {"calls", trace.calls},
                      {"device_name", run.device_name},
                      {"torch_version", run.torch_version},
                      {"git_sha", run.git_sha},
                      {"started_at", run.started_at}}}};
  return doc.dump(1, ' ', false, json::error_handler_t::replace);
}

std::string trace_path(const std::string& output_csv, const std::string& point_id,
                       const std::string& backend, int repetition) {
  const std::string folder = sibling(output_csv, side::traces);
  std::string name = point_id + "__" + backend;
  if (repetition > 0) name += "__rep" + std::to_string(repetition + 1);
  return (std::filesystem::path(folder) / (name + ".json")).string();
}

}  // namespace attnbench
