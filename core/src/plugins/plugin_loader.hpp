// Finds and loads backend plugins with Boost.DLL. Every failure is kept with the loader's text, so
// `attnbench list` can say why a library was refused while the good ones still run.
#pragma once

#include <attnbench/backend.hpp>

#include <filesystem>
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
};

struct LoadFailure {
  std::string file;
  std::string reason;
};

struct PluginSet {
  std::vector<LoadedBackend> backends;  // sorted by name
  std::vector<LoadFailure> failures;

  const LoadedBackend* find(const std::string& name) const;
  std::vector<std::string> names() const;
};

// Loads one file; throws std::runtime_error with the reason when it is not a usable plugin.
LoadedBackend load_plugin(const std::filesystem::path& file);

// Loads every file in `dir` named attnbench_*.so (the platform's suffix); a failure of one plugin
// does not stop the others. Two plugins with the same backend name: the second is refused.
PluginSet load_plugins(const std::filesystem::path& dir);

// Where plugins are looked for when no --plugin-dir is given: $ATTNBENCH_PLUGIN_DIR, else the
// `plugins` folder beside the running executable.
std::filesystem::path default_plugin_dir();
// `dir` when given (--plugin-dir), else default_plugin_dir().
std::filesystem::path plugin_dir_or_default(const std::string& dir);

}  // namespace attnbench
