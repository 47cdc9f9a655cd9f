// Python backends, loaded in the worker through the bridge library (core/src/python/): each one
// becomes a LoadedBackend like a plugin's, or a LoadFailure that says why not.
#pragma once

#include "plugins/plugin_loader.hpp"
#include "python/bridge_api.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attnbench {

// Where a run's backends come from: plugin folders, and the Python functions its config names.
struct BackendSources {
  std::vector<std::string> plugin_dirs;  // --plugin-dir, in order (none: the default folder)
  std::vector<PythonFunctionRef> python;
};

// $ATTNBENCH_PYTHON_BRIDGE, else libattnbench-python.so beside the executable (a build tree), else
// in ../lib/attnbench/ from it (an installed prefix); nullopt when there is none: this attnbench
// was built without Python.
std::optional<std::filesystem::path> python_bridge_path();

// The worker's `--python NAME=FILE:FUNCTION`, and back (throws std::invalid_argument).
std::string python_ref_arg(const PythonFunctionRef& ref);
PythonFunctionRef parse_python_ref_arg(const std::string& arg);
inline std::string python_ref_id(const PythonFunctionRef& ref) {
  return ref.file + ":" + ref.function;
}

// Appends each to `set` (its failures named by FILE:FUNCTION, python set): no bridge, an exception
// while importing the module (lost_backend: the backend's rows say it), no such function
// (config_error), a name a plugin already has (duplicate). `skip`: ids whose import took an
// earlier worker down; `on_loading` is told each just before its import.
void load_python_backends(
    const std::vector<PythonFunctionRef>& refs, const std::vector<std::string>& skip,
    const std::function<void(const std::string& id, const std::string& backend)>& on_loading,
    PluginSet& set);

}  // namespace attnbench
