#include "plugins/python_backends.hpp"

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace attnbench {

namespace {

constexpr const char* kBridgeFile = "libattnbench-python.so";

// Loaded once per worker, on the first Python backend; kept by every backend made through it.
// rtld_global: the extension modules CPython loads (torch._C) resolve CPython's symbols there.
std::shared_ptr<boost::dll::shared_library> load_bridge(const std::filesystem::path& path) {
  namespace dll = boost::dll;
  auto lib = std::make_shared<dll::shared_library>(
      path, dll::load_mode::rtld_now | dll::load_mode::rtld_global);
  if (!lib->has("attnbench_python_bridge_version") ||
      lib->get<const int>("attnbench_python_bridge_version") != kPythonBridgeVersion)
    throw std::runtime_error(path.string() + " is a Python bridge of another attnbench version");
  return lib;
}

}  // namespace

std::optional<std::filesystem::path> python_bridge_path() {
  std::error_code ec;
  if (const char* env = std::getenv("ATTNBENCH_PYTHON_BRIDGE"); env && *env)
    return std::filesystem::is_regular_file(env, ec) ? std::optional<std::filesystem::path>(env)
                                                     : std::nullopt;
  const std::filesystem::path exe_dir = boost::dll::program_location().parent_path();
  for (const auto& candidate :
       {exe_dir / kBridgeFile, exe_dir / ".." / "lib" / "attnbench" / kBridgeFile})
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate.lexically_normal();
  return std::nullopt;
}

std::string python_ref_arg(const PythonFunctionRef& ref) {
  return ref.name + "=" + ref.file + ":" + ref.function;
}

PythonFunctionRef parse_python_ref_arg(const std::string& arg) {
  const size_t eq = arg.find('='), colon = arg.rfind(':');
  if (eq == std::string::npos || colon == std::string::npos || colon < eq)
    throw std::invalid_argument("--python expects NAME=FILE:FUNCTION, got '" + arg + "'");
  return {arg.substr(0, eq), arg.substr(eq + 1, colon - eq - 1), arg.substr(colon + 1)};
}

void load_python_backends(
    const std::vector<PythonFunctionRef>& refs, const std::vector<std::string>& skip,
    const std::function<void(const std::string& id, const std::string& backend)>& on_loading,
    PluginSet& set) {
  if (refs.empty()) return;
  const auto failure = [&](const PythonFunctionRef& ref, std::string reason) -> LoadFailure& {
    LoadFailure f;
    f.file = python_ref_id(ref);
    f.reason = std::move(reason);
    f.python = true;
    f.lost_backend = ref.name;
    return set.failures.emplace_back(std::move(f));
  };
  std::shared_ptr<boost::dll::shared_library> bridge;
  std::string no_bridge;
  try {
    const auto path = python_bridge_path();
    if (!path)
      throw std::runtime_error(
          "this attnbench was built without Python (CMake found no Python 3 development files): "
          "Python backends cannot run");
    bridge = load_bridge(*path);
  } catch (const std::exception& e) {
    no_bridge = e.what();
  }
  for (const PythonFunctionRef& ref : refs) {
    const std::string id = python_ref_id(ref);
    if (std::find(skip.begin(), skip.end(), id) != skip.end()) continue;
    if (!bridge) {
      failure(ref, no_bridge);
      continue;
    }
    if (const LoadedBackend* twin = set.find(ref.name)) {
      failure(ref, "the plugin " + twin->file + " is named '" + ref.name + "' too").duplicate =
          true;
      continue;
    }
    if (on_loading) on_loading(id, ref.name);
    PythonBackendMade made;
    try {
      made = bridge->get_alias<MakePythonBackend>("attnbench_make_python_backend")(ref);
    } catch (const std::exception& e) {
      made.error = std::string("the Python bridge failed: ") + e.what();
    }
    if (!made.backend) {
      failure(ref, made.error).config_error = made.no_such_function;
      continue;
    }
    LoadedBackend loaded;
    loaded.name = ref.name;
    loaded.description = made.backend->description();
    loaded.file = id;
    loaded.backend =
        std::shared_ptr<Backend>(made.backend.release(), [bridge](Backend* b) { delete b; });
    set.backends.push_back(std::move(loaded));
  }
  std::sort(set.backends.begin(), set.backends.end(),
            [](const LoadedBackend& a, const LoadedBackend& b) { return a.name < b.name; });
}

}  // namespace attnbench
