// The plugin kind: shared libraries named attnbench_<backend>.so in the plugin folders, each
// exporting one backend (include/attnbench/plugin.hpp). A sweep names one by its backend name.
#include "plugins/backend_kind.hpp"

namespace attnbench {

namespace {

class PluginKind final : public BackendKind {
 public:
  std::string name() const override { return "plugin"; }
  std::string noun() const override { return "plugin"; }
  std::string form() const override { return ""; }
  BackendSpec parse(const std::string& value, const std::string&) const override {
    return {name(), value, value, value, "", 0, 0};
  }
  void load(const BackendSources& sources, const std::vector<std::string>& skip,
            const OnLoading& on_loading, PluginSet& set) const override {
    PluginSet found =
        load_plugins(plugin_search_path(sources.plugin_dirs), skip, [&](const std::string& file) {
          if (on_loading) on_loading(file, "");
        });
    for (auto& b : found.backends) set.backends.push_back(std::move(b));
    for (auto& f : found.failures) set.failures.push_back(std::move(f));
  }
};

}  // namespace

const BackendKind& plugin_kind() {
  static const PluginKind kind;
  return kind;
}

}  // namespace attnbench
