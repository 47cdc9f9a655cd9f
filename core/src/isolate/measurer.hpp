// Where a run's (point, backend)s are measured: in isolated workers (the default), or in this
// process (`--isolation none`, for gdb and cuda-gdb). run_sweep() drives either the same way.
#pragma once

#include "config/sweep.hpp"
#include "measure/device/host_info.hpp"
#include "records/run_options.hpp"
#include "plugins/plugin_loader.hpp"
#include "plugins/backend_kind.hpp"
#include "records/row.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnbench {

class Measurer {
 public:
  virtual ~Measurer() = default;
  virtual const HostInfo& host() const = 0;
  virtual std::vector<std::string> backend_names() const = 0;
  virtual const std::vector<LoadFailure>& failures() const = 0;
  // What identifies a loaded backend's code (Row::backend_build); empty for one not loaded.
  virtual std::string backend_build(const std::string& backend) const = 0;
  virtual void setup(const RunOptions& options) = 0;
  // Never throws for what a backend does: a crash or a hang becomes the rows' status.
  virtual BackendRecords measure(const Point& point, const std::string& backend) = 0;
};

// Workers are `exe worker`; one is started now (its hello says the host and the backends).
// `visible_device`: set, its workers see only that GPU (run --devices: one measurer per GPU).
std::unique_ptr<Measurer> isolated_measurer(
    const std::string& exe, const BackendSources& sources,
    std::optional<std::string> visible_device = std::nullopt);
// Loads the plugins and Python backends into this process (isolate/in_process.cpp, with LibTorch).
std::unique_ptr<Measurer> in_process_measurer(const BackendSources& sources);

// A backend that could not be loaded (its plugin took a worker down, its Python module raised
// while importing, its source did not compile) is still a backend of the run: its rows say why.
const LoadFailure* unloaded_backend(const std::string& backend,
                                    const std::vector<std::string>& loaded,
                                    const std::vector<LoadFailure>& failures);
std::vector<std::string> names_with_unloaded(std::vector<std::string> loaded,
                                             const std::vector<LoadFailure>& failures);
BackendRecords unloaded_backend_records(const LoadFailure& failure, const Point& point,
                                        const std::string& backend, const RunOptions& options);

}  // namespace attnbench
