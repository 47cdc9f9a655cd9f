#include "isolate/measurer.hpp"
#include "isolate/worker_client.hpp"
#include "records/assemble.hpp"

#include <iostream>

namespace attnbench {

namespace {

constexpr double kStartTimeoutS = 300;  // LibTorch, CUDA and every plugin loaded once

class IsolatedMeasurer final : public Measurer {
 public:
  IsolatedMeasurer(const std::string& exe, const std::vector<std::string>& plugin_dirs,
                   std::optional<std::string> visible_device)
      : client_(exe, plugin_dirs, kStartTimeoutS, visible_device) {
    std::cerr << "attnbench: worker" << (visible_device ? " for GPU " + *visible_device : "")
              << " ready in " << client_.start_seconds() << " s\n";
  }
  const HostInfo& host() const override { return client_.hello().host; }
  std::vector<std::string> backend_names() const override {
    std::vector<std::string> names;
    for (const auto& b : client_.hello().backends) names.push_back(b.name);
    return names;
  }
  const std::vector<LoadFailure>& failures() const override { return client_.hello().failures; }
  void setup(const RunOptions& options) override {
    options_ = options;
    client_.setup(options);
  }
  BackendRecords measure(const Point& point, const std::string& backend) override {
    WorkerAnswer answer = client_.measure(point, backend, options_.measurement.timeout_s);
    if (answer.records) return std::move(*answer.records);
    PassResults failed;
    failed.refused = PassFailure{answer.status, answer.reason};
    return assemble_records(row_setup(point.id, point.problem, backend, options_), failed);
  }

 private:
  WorkerClient client_;
  RunOptions options_;
};

}  // namespace

std::unique_ptr<Measurer> isolated_measurer(const std::string& exe,
                                            const std::vector<std::string>& plugin_dirs,
                                            std::optional<std::string> visible_device) {
  return std::make_unique<IsolatedMeasurer>(exe, plugin_dirs, std::move(visible_device));
}

}  // namespace attnbench
