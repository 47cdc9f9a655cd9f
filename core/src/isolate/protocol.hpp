// The messages between `attnbench run` and its workers, one JSON object per line:
//   worker -> parent  {"type":"hello","host":{...},"backends":[...],"failures":[...]}  once, at
//   start parent -> worker  {"type":"setup","options":{...}}                                  once
//   parent -> worker  {"type":"measure","point":{...},"backend":"flash"}               per (point,
//   backend) worker -> parent  {"type":"pass","name":"correctness"}                             as
//   each pass starts worker -> parent  {"type":"records","records":{...}} its answer worker ->
//   parent  {"type":"fatal","reason":"..."}       instead of records, then it exits parent ->
//   worker  {"type":"quit"}
// Numbers travel with full precision; every record survives the trip exactly (protocol_test).
#pragma once

#include "config/sweep.hpp"
#include "measure/device/host_info.hpp"
#include "records/run_options.hpp"
#include "plugins/backend_kind.hpp"
#include "records/row.hpp"

#include <string>
#include <vector>

namespace attnbench {

struct PluginInfo {
  std::string name, description, file;
  std::string build;  // Row::backend_build
};

struct Hello {
  HostInfo host;
  std::vector<PluginInfo> backends;
  std::vector<LoadFailure> failures;
};

// One parsed message; `type` says which of the other fields is filled.
struct Message {
  std::string type;
  Hello hello;
  RunOptions options;
  Point point;
  std::string backend;
  std::string kind;    // loading: the backend's kind
  std::string name;    // pass; loading: the id (a plugin's file, FILE:FUNCTION)
  std::string reason;  // fatal
  BackendRecords records;
};

std::string hello_message(const Hello& hello);
std::string setup_message(const RunOptions& options);
std::string measure_message(const Point& point, const std::string& backend);
std::string pass_message(const std::string& name);
// The worker is about to load this plugin file, or (backend named) a backend of another kind.
// `backend` empty for a plugin file: its name is known once it has loaded.
std::string loading_message(const std::string& kind, const std::string& id,
                            const std::string& backend);
std::string records_message(const BackendRecords& records);
std::string fatal_message(const std::string& reason);
// A backend of a kind other than plugin, as the worker's command line passes it (`--backend`),
// and back (throws std::invalid_argument).
std::string backend_spec_arg(const BackendSpec& spec);
BackendSpec parse_backend_spec_arg(const std::string& arg);
std::string quit_message();

// Throws std::runtime_error on a line that is not a message of this protocol.
Message parse_message(const std::string& line);

}  // namespace attnbench
