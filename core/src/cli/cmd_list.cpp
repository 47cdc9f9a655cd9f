#include "cli/commands.hpp"
#ifdef ATTNBENCH_WITH_MEASURE
#include "isolate/worker_loop.hpp"
#endif
#include "isolate/worker_client.hpp"
#include "plugins/plugin_loader.hpp"
#include "write/table.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

namespace attnbench {

namespace {

// The plugins are loaded in a worker, as a run loads them: one that crashes or hangs while loading
// is listed with the reason, not the end of `list`.
int cmd_list(const std::vector<std::string>& plugin_dirs) {
  const auto search = plugin_search_path(plugin_dirs);
  WorkerClient worker(measure_executable(), {plugin_dirs, {}, {}}, kWorkerStartTimeoutS);
  const Hello& hello = worker.hello();
  std::cout << "plugins in " << folder_list(search) << ":\n";
  TextTable table;
  table.header = {"backend", "description", "file"};
  for (const auto& b : hello.backends) table.rows.push_back({b.name, b.description, b.file});
  table.print(std::cout, false);
  if (!hello.failures.empty()) {
    std::cout << "\nnot loaded:\n";
    for (const auto& f : hello.failures) std::cout << "  " << f.file << ": " << f.reason << '\n';
  }
  return 0;
}

}  // namespace

Subcommand add_list(CLI::App& app) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto* cmd =
      app.add_subcommand("list", "Show the backend plugins found, and why any failed to load");
  cmd->add_option("--plugin-dir", *dirs, kPluginDirHelp)->expected(1)->take_all();
  return {cmd, [dirs] { return cmd_list(*dirs); }, [] { return false; }};  // in a worker
}

Subcommand add_worker(CLI::App& app) {
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto skip = std::make_shared<std::vector<std::string>>();
  auto specs = std::make_shared<std::vector<std::string>>();
  auto fd = std::make_shared<int>(3);
  auto* cmd = app.add_subcommand("worker", "");  // internal: started by `run`
  cmd->group("");                                // hidden from help
  cmd->add_option("--plugin-dir", *dirs)->expected(1)->take_all();
  cmd->add_option("--skip-plugin", *skip)->expected(1)->take_all();
  cmd->add_option("--backend", *specs)->expected(1)->take_all();  // backend_spec_arg()
  cmd->add_option("--protocol-fd", *fd);
#ifdef ATTNBENCH_WITH_MEASURE
  return {cmd,
          [dirs, skip, specs, fd] {
            BackendSources sources{*dirs, {}, {}};
            for (const auto& arg : *specs) sources.specs.push_back(parse_backend_spec_arg(arg));
            return worker_loop(sources, *skip, *fd);
          },
          [] { return true; }};
#else
  return {cmd, nullptr, [] { return true; }};  // attnbench hands it to attnbench-measure
#endif
}

}  // namespace attnbench
