#include "isolate/worker_loop.hpp"

#include "isolate/worker_server.hpp"
#include "isolate/measure_records.hpp"
#include "measure/torch_settings.hpp"

#include <memory>

namespace attnbench {

namespace {

// The worker of a run: the plugins and Python backends loaded here, the runner's passes.
class MeasuringSide final : public WorkerSide {
 public:
  MeasuringSide(const BackendSources& sources, const std::vector<std::string>& skip)
      : sources_(sources), skip_(skip) {}

  Hello start(const std::function<void(const std::string&)>& send) override {
    host_ = query_host();
    // Each backend announced before it loads: if loading it takes this worker down, the parent
    // knows which one did, and starts the next worker without it. What a module's import changes
    // of torch's settings is undone, as what its calls change is (runner.cpp).
    const TorchSettingsGuard settings;
    plugins_ = load_backends(
        sources_, skip_,
        [&](const std::string& kind, const std::string& id, const std::string& backend) {
          send(loading_message(kind, id, backend));
        });
    Hello hello{host_, {}, plugins_.failures};
    for (const auto& b : plugins_.backends)
      hello.backends.push_back({b.name, b.description, b.file, b.build});
    return hello;
  }
  void setup(const RunOptions& options) override {
    options_ = options;
    runner_ = std::make_unique<Runner>(host_, runner_options(options));
  }
  bool has_backend(const std::string& backend) const override {
    return plugins_.find(backend) != nullptr;
  }
  BackendRecords measure(const Point& point, const std::string& backend) override {
    return measure_records(*runner_, options_, point, *plugins_.find(backend));
  }
  std::optional<std::string> broken() const override { return sticky_cuda_error(host_); }

 private:
  const BackendSources& sources_;
  const std::vector<std::string>& skip_;
  HostInfo host_;
  PluginSet plugins_;
  RunOptions options_;
  std::unique_ptr<Runner> runner_;
};

}  // namespace

int worker_loop(const BackendSources& sources, const std::vector<std::string>& skip,
                int protocol_fd) {
  MeasuringSide side(sources, skip);
  return serve_worker(side, protocol_fd);
}

}  // namespace attnbench
