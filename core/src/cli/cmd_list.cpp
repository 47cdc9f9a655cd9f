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
#include <sstream>
#include <string>
#include <vector>

namespace attnbench {

namespace {

constexpr size_t kListWidth = 100;  // a terminal's columns, with room to spare

// `text` in lines of at most `width` characters, broken at spaces (a longer word is a line).
std::vector<std::string> wrapped(const std::string& text, size_t width) {
  std::vector<std::string> out;
  std::istringstream words(text);
  std::string word, line;
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) out.push_back(line), line.clear();
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out.push_back(line);
  return out;
}

// The plugins are loaded in a worker, as a run loads them: one that crashes or hangs while loading
// is listed with the reason, not the end of `list`.
int cmd_list(const std::vector<std::string>& plugin_dirs) {
  const auto search = plugin_search_path(plugin_dirs);
  WorkerClient worker(measure_executable(), {plugin_dirs, {}, {}}, kWorkerStartTimeoutS);
  const Hello& hello = worker.hello();
  std::cout << "plugins in " << folder_list(search) << ":\n";
  // A line a backend (its name and file), its description wrapped under it: a terminal's width,
  // however long a description is (FlashInfer's lists every kernel it compiled).
  TextTable table;
  table.header = {"backend", "file"};
  for (const auto& b : hello.backends) table.rows.push_back({b.name, b.file});
  std::ostringstream lines;
  table.print(lines, false);
  std::istringstream rows(lines.str());
  std::string line;
  for (size_t i = 0; std::getline(rows, line); ++i) {
    std::cout << line << '\n';
    if (i >= 2 && i - 2 < hello.backends.size())
      for (const std::string& part : wrapped(hello.backends[i - 2].description, kListWidth - 4))
        std::cout << "    " << part << '\n';
  }
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
