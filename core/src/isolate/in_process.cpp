#include "isolate/measurer.hpp"
#include "isolate/measure_records.hpp"
#include "measure/torch_settings.hpp"

namespace attnbench {

namespace {

// What a plugin's or a module's loading changes of torch's settings is undone (worker_loop.cpp).
PluginSet loaded_as_found(const BackendSources& sources) {
  const TorchSettingsGuard settings;
  return load_backends(sources);
}

class InProcessMeasurer final : public Measurer {
 public:
  explicit InProcessMeasurer(const BackendSources& sources)
      : host_(query_host()), plugins_(loaded_as_found(sources)) {
    // What failed before any worker could start (a source that did not compile) is this run's.
    plugins_.failures.insert(plugins_.failures.end(), sources.failures.begin(),
                             sources.failures.end());
  }
  const HostInfo& host() const override { return host_; }
  std::vector<std::string> backend_names() const override {
    return names_with_unloaded(plugins_.names(), plugins_.failures);
  }
  const std::vector<LoadFailure>& failures() const override { return plugins_.failures; }
  std::string backend_build(const std::string& backend) const override {
    const LoadedBackend* b = plugins_.find(backend);
    return b ? b->build : "";
  }
  void setup(const RunOptions& options) override {
    options_ = options;
    runner_ = std::make_unique<Runner>(host_, runner_options(options));
  }
  BackendRecords measure(const Point& point, const std::string& backend) override {
    if (const LoadedBackend* loaded = plugins_.find(backend))
      return measure_records(*runner_, options_, point, *loaded);
    return unloaded_backend_records(*unloaded_backend(backend, plugins_.names(), plugins_.failures),
                                    point, backend, options_);
  }

 private:
  HostInfo host_;
  PluginSet plugins_;
  RunOptions options_;
  std::unique_ptr<Runner> runner_;
};

}  // namespace

std::unique_ptr<Measurer> in_process_measurer(const BackendSources& sources) {
  return std::make_unique<InProcessMeasurer>(sources);
}

}  // namespace attnbench
