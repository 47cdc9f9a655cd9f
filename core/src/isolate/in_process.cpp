#include "isolate/measurer.hpp"
#include "measure/runner.hpp"

namespace attnbench {

namespace {

class InProcessMeasurer final : public Measurer {
 public:
  explicit InProcessMeasurer(const std::vector<std::string>& plugin_dirs)
      : host_(query_host()), plugins_(load_plugins(plugin_search_path(plugin_dirs))) {}
  const HostInfo& host() const override { return host_; }
  std::vector<std::string> backend_names() const override { return plugins_.names(); }
  const std::vector<LoadFailure>& failures() const override { return plugins_.failures; }
  void setup(const RunOptions& options) override {
    runner_ = std::make_unique<Runner>(host_, options);
  }
  BackendRecords measure(const Point& point, const std::string& backend) override {
    return runner_->measure(point, *plugins_.find(backend));
  }

 private:
  HostInfo host_;
  PluginSet plugins_;
  std::unique_ptr<Runner> runner_;
};

}  // namespace

std::unique_ptr<Measurer> in_process_measurer(const std::vector<std::string>& plugin_dirs) {
  return std::make_unique<InProcessMeasurer>(plugin_dirs);
}

}  // namespace attnbench
