// The Python kind: `{python: FILE:FUNCTION, name: NAME}`, a function the worker calls in an
// embedded CPython through the bridge library (core/src/python/, libattnbench-python.so: the one
// library that links CPython, loaded only when a sweep names a Python backend).
#include "plugins/backend_kind.hpp"

#include "python/bridge_api.hpp"

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>

namespace attnbench {

namespace {

constexpr const char* kBridgeFile = "libattnbench-python.so";

// $ATTNBENCH_PYTHON_BRIDGE, else libattnbench-python.so beside the executable (a build tree), else
// in ../lib/attnbench/ from it (an installed prefix); nullopt when there is none: this attnbench
// was built without Python.
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

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

class PythonKind final : public BackendKind {
 public:
  std::string name() const override { return "python"; }
  std::string noun() const override { return "Python backend"; }
  std::string form() const override { return "python: FILE:FUNCTION"; }

  BackendSpec parse(const std::string& value, const std::string& backend) const override {
    const size_t colon = value.rfind(':');
    if (colon == std::string::npos || colon == 0)
      throw SpecError("python", "expected FILE:FUNCTION (examples/python-backends/sdpa.py:attention), got '" +
                                    value + "'");
    const std::string function = value.substr(colon + 1);
    if (!is_identifier(function))
      throw SpecError("python", "'" + function +
                                    "' is not a Python function name (expected FILE:FUNCTION)");
    const std::filesystem::path file = value.substr(0, colon);
    const std::string absolute = existing_file("python", file.string());
    return {this->name(), backend.empty() ? file.stem().string() : backend,
            absolute + ":" + function, value, "", 0, 0};
  }

  std::string unavailable() const override {
    return python_bridge_path() ? ""
                                : "this attnbench was built without Python (CMake found no "
                                  "Python 3 development files; docs/backends.md)";
  }

  // Each a LoadedBackend, or a failure named by FILE:FUNCTION: no bridge, an exception while
  // importing the module (lost_backend: its rows say it), no such function (config_error), a
  // name another backend already has (duplicate).
  void load(const BackendSources& sources, const std::vector<std::string>& skip,
            const OnLoading& on_loading, PluginSet& set) const override {
    std::vector<const BackendSpec*> mine;
    for (const BackendSpec& spec : sources.specs)
      if (spec.kind == name()) mine.push_back(&spec);
    if (mine.empty()) return;
    const auto failure = [&](const BackendSpec& spec, std::string reason) -> LoadFailure& {
      return set.failures.emplace_back(spec_failure(spec, std::move(reason)));
    };
    std::shared_ptr<boost::dll::shared_library> bridge;
    std::string no_bridge;
    try {
      const auto path = python_bridge_path();
      if (!path)
        throw std::runtime_error(
            "this attnbench was built without Python (CMake found no Python 3 development "
            "files): Python backends cannot run");
      bridge = load_bridge(*path);
    } catch (const std::exception& e) {
      no_bridge = e.what();
    }
    for (const BackendSpec* spec : mine) {
      if (std::find(skip.begin(), skip.end(), spec->target) != skip.end()) continue;
      if (!bridge) {
        failure(*spec, no_bridge);
        continue;
      }
      if (name_taken(*spec, set)) continue;
      if (on_loading) on_loading(spec->target, spec->name);
      const size_t colon = spec->target.rfind(':');
      const PythonFunctionRef ref{spec->name, spec->target.substr(0, colon),
                                  spec->target.substr(colon + 1)};
      PythonBackendMade made;
      try {
        made = bridge->get_alias<MakePythonBackend>("attnbench_make_python_backend")(ref);
      } catch (const std::exception& e) {
        made.error = std::string("the Python bridge failed: ") + e.what();
      }
      if (!made.backend) {
        failure(*spec, made.error).config_error = made.no_such_function;
        continue;
      }
      LoadedBackend loaded;
      loaded.name = spec->name;
      loaded.description = made.backend->description();
      loaded.file = spec->target;
      loaded.build = file_build("py:", ref.file);  // its module (not what that imports)
      loaded.backend =
          std::shared_ptr<Backend>(made.backend.release(), [bridge](Backend* b) { delete b; });
      set.backends.push_back(std::move(loaded));
    }
  }
};

}  // namespace

const BackendKind& python_kind() {
  static const PythonKind kind;
  return kind;
}

}  // namespace attnbench
