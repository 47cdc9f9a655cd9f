// Finds and loads backend plugins with Boost.DLL. Every failure is kept with the loader's text, so
// `attnbench list` can say why a library was refused while the good ones still run.
#pragma once

#include <attnbench/backend.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace attnbench {

struct LoadedBackend {
  std::string name;
  std::string description;
  std::string file;
  // The deleter holds the library: it stays loaded as long as any copy of this pointer lives.
  std::shared_ptr<Backend> backend;
  std::string build;  // the code: Row::backend_build
};

struct LoadFailure {
  std::string file;  // what failed: a plugin's file, a Python FILE:FUNCTION, a source file
  std::string reason;
  std::string kind = "plugin";  // its backend kind (backend_kind.hpp)
  bool duplicate = false;       // a usable backend whose name another already has
  bool config_error = false;    // the config names what cannot be: a function the module lacks
  // Set when the backend is lost for the run: loading it took its worker down (a crash, an abort
  // or a hang in a plugin's static initialisers or factory; the backend its file name says,
  // attnbench_<name>.so), a Python module raised while importing, a source did not compile. Its
  // rows then say why instead of the whole run stopping.
  std::string lost_backend;
};

struct PluginSet {
  std::vector<LoadedBackend> backends;  // sorted by name
  std::vector<LoadFailure> failures;

  const LoadedBackend* find(const std::string& name) const;
  std::vector<std::string> names() const;
};

// Loads one file; throws std::runtime_error with the reason when it is not a usable plugin.
LoadedBackend load_plugin(const std::filesystem::path& file);
// What identifies the code in a file: `prefix` and a hash of its bytes (Row::backend_build);
// empty when it cannot be read.
std::string file_build(const std::string& prefix, const std::filesystem::path& file);

// Loads every file named attnbench_*.so (the platform's suffix) in `dirs`, in order; a failure of
// one plugin does not stop the others. Two plugins with one backend name: the second is refused,
// naming both files.
// A file (or folder) reached twice, through two names of one folder, is loaded once. `skip`: files
// not to load (a worker's parent names those that took an earlier worker down); `on_loading` is
// told each file just before it is loaded.
// What each plugin ABI version since `abi` added, for the refusal of a plugin built for it:
// " (2 added ...; 3 ...; 5 ...)"; empty for the current one, a newer one, or one below 1.
std::string abi_changes_since(int abi);

PluginSet load_plugins(const std::vector<std::filesystem::path>& dirs,
                       const std::vector<std::string>& skip = {},
                       const std::function<void(const std::string&)>& on_loading = {});

// The backend a plugin file is named for: attnbench_flash.so -> "flash" ("" if it is not so named).
std::string backend_of_file(const std::string& file);
inline PluginSet load_plugins(const std::filesystem::path& dir) {
  return load_plugins(std::vector<std::filesystem::path>{dir});
}

// Where plugins are looked for, in order: the --plugin-dir folders (none given: the default
// folder), then each folder of $ATTNBENCH_PLUGIN_PATH (colon-separated).
std::vector<std::filesystem::path> plugin_search_path(const std::vector<std::string>& dirs);

// The folder of the bundled plugins: $ATTNBENCH_PLUGIN_DIR, else `plugins` beside the running
// executable (a build tree), else ../lib/attnbench/plugins from it (an installed prefix).
std::filesystem::path default_plugin_dir();

// "a, b and c" for messages.
std::string folder_list(const std::vector<std::filesystem::path>& dirs);

}  // namespace attnbench
