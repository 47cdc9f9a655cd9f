#include "isolate/measurer.hpp"
#include "isolate/measure_records.hpp"

namespace attnbench {

namespace {

class InProcessMeasurer final : public Measurer {
 public:
  explicit InProcessMeasurer(const BackendSources& sources)
      : host_(query_host()), plugins_(load_backends(sources)) {
    // What failed before any worker could start (a source that did not compile) is this run's.
    plugins_.failures.insert(plugins_.failures.end(), sources.failures.begin(),
                             sources.failures.end());
  }
  const HostInfo& host() const override { return host_; }
  std::vector<std::string> backend_names() const override {
    return names_with_unloaded(plugins_.names(), plugins_.failures);
  }
  const std::vector<LoadFailure>& failures() const override { return plugins_.failures; }
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
