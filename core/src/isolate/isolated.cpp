#include "isolate/measurer.hpp"
#include "isolate/worker_client.hpp"
#include "records/assemble.hpp"

#include <algorithm>
#include <iostream>

namespace attnbench {

namespace {

class IsolatedMeasurer final : public Measurer {
 public:
  IsolatedMeasurer(const std::string& exe, const std::vector<std::string>& plugin_dirs,
                   std::optional<std::string> visible_device)
      : client_(exe, plugin_dirs, kWorkerStartTimeoutS, visible_device) {
    std::cerr << "attnbench: worker" << (visible_device ? " for GPU " + *visible_device : "")
              << " ready in " << client_.start_seconds() << " s\n";
  }
  const HostInfo& host() const override { return client_.hello().host; }
  // With the backends whose plugin took a worker down while loading: a run that names one gets
  // its rows, each saying why, and the other backends are measured.
  std::vector<std::string> backend_names() const override {
    std::vector<std::string> names;
    for (const auto& b : client_.hello().backends) names.push_back(b.name);
    for (const auto& f : client_.hello().failures)
      if (const LoadFailure* lost = lost_plugin(f.lost_backend);
          lost == &f && std::find(names.begin(), names.end(), f.lost_backend) == names.end())
        names.push_back(f.lost_backend);
    return names;
  }
  const std::vector<LoadFailure>& failures() const override { return client_.hello().failures; }
  void setup(const RunOptions& options) override {
    options_ = options;
    client_.setup(options);
  }
  BackendRecords measure(const Point& point, const std::string& backend) override {
    if (const LoadFailure* lost = lost_plugin(backend)) {
      PassResults failed;
      failed.refused = PassFailure{Status::error, "plugin " + lost->file + " " + lost->reason};
      return assemble_records(row_setup(point.id, point.problem, backend, options_), failed);
    }
    WorkerAnswer answer = client_.measure(point, backend, options_.measurement.timeout_s);
    if (answer.records) return std::move(*answer.records);
    PassResults failed;
    failed.refused = PassFailure{answer.status, answer.reason};
    return assemble_records(row_setup(point.id, point.problem, backend, options_), failed);
  }

 private:
  const LoadFailure* lost_plugin(const std::string& backend) const {
    if (backend.empty()) return nullptr;
    for (const auto& b : client_.hello().backends)
      if (b.name == backend) return nullptr;  // loaded from another file
    for (const auto& f : client_.hello().failures)
      if (f.lost_backend == backend) return &f;
    return nullptr;
  }

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
