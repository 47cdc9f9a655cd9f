#include "plugins/backend_kind.hpp"

#include "base/errors.hpp"

#include <algorithm>
#include <filesystem>

namespace attnbench {

// Defined beside their kinds.
const BackendKind& python_kind();
const BackendKind& source_kind();

const std::vector<const BackendKind*>& backend_kinds() {
  static const std::vector<const BackendKind*> kinds = {&plugin_kind(), &python_kind(),
                                                        &source_kind()};
  return kinds;
}

const BackendKind* find_backend_kind(const std::string& name) {
  for (const BackendKind* kind : backend_kinds())
    if (kind->name() == name) return kind;
  return nullptr;
}

std::string failure_subject(const LoadFailure& failure) {
  const BackendKind* kind = find_backend_kind(failure.kind);
  return (kind ? kind->noun() : failure.kind) + " " + failure.file;
}

std::string existing_file(const std::string& key, const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw SpecError(key, path + ": no such file (relative to the working directory, " +
                             std::filesystem::current_path(ec).string() + ")");
  return std::filesystem::absolute(path, ec).lexically_normal().string();
}

LoadFailure spec_failure(const BackendSpec& spec, std::string reason) {
  LoadFailure f{spec.target, std::move(reason), spec.kind};
  f.lost_backend = spec.name;
  return f;
}

bool name_taken(const BackendSpec& spec, PluginSet& set) {
  const LoadedBackend* twin = set.find(spec.name);
  if (!twin) return false;
  LoadFailure f = spec_failure(spec, "the plugin " + twin->file + " is named '" + spec.name + "' too");
  f.duplicate = true;
  set.failures.push_back(std::move(f));
  return true;
}

PluginSet load_backends(const BackendSources& sources, const std::vector<std::string>& skip,
                        const OnLoadingOfKind& on_loading) {
  PluginSet set;
  for (const BackendKind* kind : backend_kinds())
    kind->load(sources, skip,
               [&](const std::string& id, const std::string& backend) {
                 if (on_loading) on_loading(kind->name(), id, backend);
               },
               set);
  std::sort(set.backends.begin(), set.backends.end(),
            [](const LoadedBackend& a, const LoadedBackend& b) { return a.name < b.name; });
  return set;
}

BackendSources prepare_backends(const std::vector<std::string>& plugin_dirs,
                                const std::vector<BackendSpec>& specs,
                                const std::string& config_file, bool dry_run) {
  BackendSources sources{plugin_dirs, {}, {}};
  for (BackendSpec spec : specs) {
    const BackendKind* kind = find_backend_kind(spec.kind);
    if (!kind) throw std::logic_error("a backend of no kind: " + spec.kind);
    if (kind == &plugin_kind()) continue;
    if (const std::string lacking = kind->unavailable(); !lacking.empty())
      throw ConfigError(config_file, spec.line, spec.column, "backends",
                        "'" + spec.written + "' is a " + kind->noun() + ", and " + lacking);
    if (dry_run && kind->prepares()) {
      sources.failures.push_back(spec_failure(spec, "not compiled: a dry run compiles nothing"));
      continue;
    }
    if (auto failed = kind->prepare(spec)) {
      sources.failures.push_back(std::move(*failed));
      continue;
    }
    sources.specs.push_back(std::move(spec));
  }
  return sources;
}

}  // namespace attnbench
