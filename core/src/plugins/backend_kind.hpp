// Backend kinds: where a backend comes from and how a run gets it. A plugin (a shared library in a
// plugin folder, named by its backend: `flash`), a Python function (`{python: FILE:FUNCTION}`),
// a C++/CUDA source file compiled on first use (`{source: FILE}`). Each kind is one class
// (plugin_kind.cpp, python_kind.cpp, source_kind.cpp) in one list (backend_kinds()); the config,
// the parent and the worker reach a kind only through it. Recipe: docs/contributing.md.
#pragma once

#include "plugins/plugin_loader.hpp"

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnbench {

// One backend as the sweep names it.
struct BackendSpec {
  std::string kind;     // the kind's name: "plugin", "python", "source"
  std::string name;     // the report's name for it
  std::string target;   // what the kind loads: a plugin's backend name, FILE:FUNCTION, a file
  std::string written;  // as the config wrote it, for messages
  std::string library;  // source: the compiled plugin, once prepare() made it
  int line = 0, column = 0;
};

// Where a run's backends come from.
struct BackendSources {
  std::vector<std::string> plugin_dirs;  // --plugin-dir, in order (none: the default folder)
  std::vector<BackendSpec> specs;        // the backends of every kind but plugins (found in dirs)
  // What failed before any worker started (a source file that did not compile): those backends'
  // rows say why.
  std::vector<LoadFailure> failures;
};

// A kind's refusal of a config entry: the key it concerns ("python", "name") and why.
class SpecError : public std::runtime_error {
 public:
  SpecError(std::string key, const std::string& message)
      : std::runtime_error(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// Told each backend just before a worker loads it: its id (LoadFailure::file) and its name.
using OnLoading = std::function<void(const std::string& id, const std::string& backend)>;

class BackendKind {
 public:
  virtual ~BackendKind() = default;
  // "python": the config's key for it ({python: ...}), LoadFailure::kind and the worker's.
  virtual std::string name() const = 0;
  // "python backend": how messages and rows name one.
  virtual std::string noun() const = 0;
  // How a sweep writes one, for messages: "python: FILE:FUNCTION"; empty: by its name alone.
  virtual std::string form() const = 0;
  // The spec of `{<name()>: value, name: NAME}` (NAME empty when not given); throws SpecError.
  // Paths are relative to the working directory.
  virtual BackendSpec parse(const std::string& value, const std::string& name) const = 0;
  // In the parent, before any worker: what this attnbench lacks to run the kind ("" when
  // nothing), which refuses the config at the entry.
  virtual std::string unavailable() const { return ""; }
  // In the parent, before any worker: makes what the worker will load (compiles a source). A
  // failure there is the backend's (its rows say it), not the run's.
  virtual std::optional<LoadFailure> prepare(BackendSpec& /*spec*/) const { return std::nullopt; }
  // Whether prepare() does work a dry run skips (a compile: seconds to minutes).
  virtual bool prepares() const { return false; }
  // In a worker: loads this kind's backends of `sources` into `set`, announcing each just
  // before; `skip`: ids that took an earlier worker down while loading. Every failure is one of
  // `set.failures`, never an exception.
  virtual void load(const BackendSources& sources, const std::vector<std::string>& skip,
                    const OnLoading& on_loading, PluginSet& set) const = 0;
};

// Every kind, plugins first (a name the config writes bare is a plugin's).
const std::vector<const BackendKind*>& backend_kinds();
// nullptr for a name no kind has.
const BackendKind* find_backend_kind(const std::string& name);
const BackendKind& plugin_kind();
// "plugin flash.so", "python backend flex.py:attention": a failure as messages name it.
std::string failure_subject(const LoadFailure& failure);

// For a kind's parse and load. `path` (a file the config names) absolute, or SpecError(key)
// naming the working directory it was looked up in.
std::string existing_file(const std::string& key, const std::string& path);
// A failure of `spec`'s own: its id, reason and kind, its backend lost (its rows say it).
LoadFailure spec_failure(const BackendSpec& spec, std::string reason);
// True, with a duplicate failure in `set`, when a backend loaded before took `spec`'s name.
bool name_taken(const BackendSpec& spec, PluginSet& set);

// Every kind's backends, in the kinds' order: what a worker (or an in-process run) loads.
// `on_loading` is told each one's kind, id and name just before it loads.
using OnLoadingOfKind = std::function<void(const std::string& kind, const std::string& id,
                                           const std::string& backend)>;
PluginSet load_backends(const BackendSources& sources, const std::vector<std::string>& skip = {},
                        const OnLoadingOfKind& on_loading = {});

// The specs of the parent's run: each kind checked available (a ConfigError at its entry
// otherwise, `config_file` naming the file) and prepared. Plugin specs are left out: the plugin
// folders provide them. `dry_run`: nothing is compiled; such backends are listed as not loaded,
// saying so.
BackendSources prepare_backends(const std::vector<std::string>& plugin_dirs,
                                const std::vector<BackendSpec>& specs,
                                const std::string& config_file, bool dry_run = false);

}  // namespace attnbench
