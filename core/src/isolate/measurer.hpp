// Where a run's (point, backend)s are measured: in isolated workers (the default), or in this
// process (`--isolation none`, for gdb and cuda-gdb). cmd_run drives either the same way.
#pragma once

#include "config/sweep.hpp"
#include "measure/device/host_info.hpp"
#include "measure/run_options.hpp"
#include "plugins/plugin_loader.hpp"
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
  virtual void setup(const RunOptions& options) = 0;
  // Never throws for what a backend does: a crash or a hang becomes the rows' status.
  virtual BackendRecords measure(const Point& point, const std::string& backend) = 0;
};

// Workers are `exe worker`; one is started now (its hello says the host and the plugins).
// `plugin_dirs`: the --plugin-dir folders, in order (none: the default folder).
// `visible_device`: set, its workers see only that GPU (run --devices: one measurer per GPU).
std::unique_ptr<Measurer> isolated_measurer(
    const std::string& exe, const std::vector<std::string>& plugin_dirs,
    std::optional<std::string> visible_device = std::nullopt);
// Loads the plugins into this process (isolate/in_process.cpp, with LibTorch).
std::unique_ptr<Measurer> in_process_measurer(const std::vector<std::string>& plugin_dirs);

}  // namespace attnbench
