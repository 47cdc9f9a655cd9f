// What the worker asks of the Python bridge, libattnbench-python.so: the one library that links
// CPython (built when CMake finds Python's development files), loaded only when a sweep names a
// Python backend, so that attnbench itself never needs Python.
#pragma once

#include <attnbench/backend.hpp>

#include <memory>
#include <string>

namespace attnbench {

// Bump when a type here changes; the worker refuses a bridge of another version.
inline constexpr int kPythonBridgeVersion = 1;

struct PythonFunctionRef {
  std::string name;      // the backend's name in the report
  std::string file;      // absolute path of the module
  std::string function;  // the attention function it defines
};

// The backend, or why there is none.
struct PythonBackendMade {
  std::unique_ptr<Backend> backend;
  // The module imported but defines no such function: the config is wrong, not the code.
  bool no_such_function = false;
  std::string
      error;  // the exception at import ("ModuleNotFoundError at flex.py:3: ..."), or the above
};

// Exported by the bridge as `attnbench_make_python_backend` (with
// `attnbench_python_bridge_version`).
using MakePythonBackend = PythonBackendMade(const PythonFunctionRef&);

}  // namespace attnbench
