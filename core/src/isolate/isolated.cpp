#include "isolate/measurer.hpp"
#include "isolate/worker_client.hpp"
#include "records/assemble.hpp"

#include <algorithm>
#include <iostream>

namespace attnbench {

const LoadFailure* unloaded_backend(const std::string& backend,
                                    const std::vector<std::string>& loaded,
                                    const std::vector<LoadFailure>& failures) {
  if (backend.empty() || std::find(loaded.begin(), loaded.end(), backend) != loaded.end())
    return nullptr;  // loaded (from another file, if two claim the name)
  for (const auto& f : failures)
    if (f.lost_backend == backend) return &f;
  return nullptr;
}

std::vector<std::string> names_with_unloaded(std::vector<std::string> loaded,
                                             const std::vector<LoadFailure>& failures) {
  const std::vector<std::string> plain = loaded;
  for (const auto& f : failures)
    if (unloaded_backend(f.lost_backend, plain, failures) == &f &&
        std::find(loaded.begin(), loaded.end(), f.lost_backend) == loaded.end())
      loaded.push_back(f.lost_backend);
  return loaded;
}

BackendRecords unloaded_backend_records(const LoadFailure& failure, const Point& point,
                                        const std::string& backend, const RunOptions& options) {
  PassResults failed;
  failed.refused = PassFailure{Status::error, failure_subject(failure) + " " + failure.reason};
  return assemble_records(row_setup(point.id, point.problem, backend, options), failed);
}

namespace {

class IsolatedMeasurer final : public Measurer {
 public:
  IsolatedMeasurer(const std::string& exe, const BackendSources& sources,
                   std::optional<std::string> visible_device)
      : client_(exe, sources, kWorkerStartTimeoutS, visible_device), prepared_(sources.failures) {
    std::cerr << "attnbench: worker" << (visible_device ? " for GPU " + *visible_device : "")
              << " ready in " << client_.start_seconds() << " s\n";
  }
  const HostInfo& host() const override { return client_.hello().host; }
  // With the backends whose plugin took a worker down while loading: a run that names one gets
  // its rows, each saying why, and the other backends are measured.
  std::vector<std::string> backend_names() const override {
    return names_with_unloaded(loaded(), failures());
  }
  // The worker's (its hello, with what took earlier workers down), and what failed before any
  // worker could start (a source that did not compile).
  const std::vector<LoadFailure>& failures() const override {
    failures_ = client_.hello().failures;
    failures_.insert(failures_.end(), prepared_.begin(), prepared_.end());
    return failures_;
  }
  std::string backend_build(const std::string& backend) const override {
    for (const auto& b : client_.hello().backends)
      if (b.name == backend) return b.build;
    return "";
  }
  void setup(const RunOptions& options) override {
    options_ = options;
    client_.setup(options);
  }
  BackendRecords measure(const Point& point, const std::string& backend) override {
    if (const LoadFailure* lost = unloaded_backend(backend, loaded(), failures()))
      return unloaded_backend_records(*lost, point, backend, options_);
    WorkerAnswer answer = client_.measure(point, backend, options_.measurement.timeout_s);
    if (answer.records) return std::move(*answer.records);
    PassResults failed;
    failed.refused = PassFailure{answer.status, answer.reason};
    RowSetup setup = row_setup(point.id, point.problem, backend, options_);
    setup.backend_build = backend_build(backend);  // the code that crashed or hung
    return assemble_records(setup, failed);
  }

 private:
  std::vector<std::string> loaded() const {
    std::vector<std::string> names;
    for (const auto& b : client_.hello().backends) names.push_back(b.name);
    return names;
  }

  WorkerClient client_;
  std::vector<LoadFailure> prepared_;
  mutable std::vector<LoadFailure> failures_;
  RunOptions options_;
};

}  // namespace

std::unique_ptr<Measurer> isolated_measurer(const std::string& exe, const BackendSources& sources,
                                            std::optional<std::string> visible_device) {
  return std::make_unique<IsolatedMeasurer>(exe, sources, std::move(visible_device));
}

}  // namespace attnbench
