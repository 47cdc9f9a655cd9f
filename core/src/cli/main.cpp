// attnbench command line: the list of subcommands, each registering its own options (cmd_*.cpp).
// Exit codes: 0 done; 1 a row ended error, oom, wrong, crashed or timeout, a failure stopped the
// run, or compare found a regression; 2 bad input (config, command line, CSV), and nothing is
// written.
//
// Built twice: `attnbench` without LibTorch (it plans, runs workers, writes and compares reports,
// and starts in milliseconds) and `attnbench-measure` with it (ATTNBENCH_WITH_MEASURE: the worker,
// list, calibrate and in-process runs). attnbench hands those to attnbench-measure by exec.
#include "base/errors.hpp"
#include "cli/commands.hpp"

#include <CLI/CLI.hpp>

#include <boost/dll/runtime_symbol_info.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

namespace attnbench {

const char* const kPluginDirHelp =
    "Folder with attnbench_*.so plugins; repeat for more (default: the bundled plugins); "
    "$ATTNBENCH_PLUGIN_PATH (colon-separated) adds folders after these";

std::string git_sha() {
  // The device machine gets a copy of the tree without .git: the caller passes the commit.
  if (const char* env = std::getenv("ATTNBENCH_GIT_SHA"); env && *env) return env;
  return build_git_sha();
}

std::string measure_executable() {
  return (boost::dll::program_location().parent_path() / "attnbench-measure").string();
}

}  // namespace attnbench

int main(int argc, char** argv) {
  using namespace attnbench;
  CLI::App app{
      "attnbench: which attention backend is fastest for your shapes, why, and what it costs"};
  app.require_subcommand(1);
  const std::vector<Subcommand> commands = {
      add_list(app),  add_run(app),  add_compare(app), add_summary(app), add_export(app),
      add_merge(app), add_plot(app), add_columns(app), add_worker(app),  add_calibrate(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  for (const Subcommand& command : commands) {
    if (!command.app->parsed()) continue;
#ifndef ATTNBENCH_WITH_MEASURE
    if (command.needs_measure()) {  // needs LibTorch: attnbench-measure takes this process's place
      const std::string exe = measure_executable();
      execv(exe.c_str(), argv);
      std::cerr << "attnbench: cannot run " << exe << ": " << std::strerror(errno) << '\n';
      return 1;
    }
#endif
    try {
      return command.run();
    } catch (const InputError& e) {
      std::cerr << "attnbench: " << e.what() << '\n';
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "attnbench: error: " << e.what() << '\n';
      return 1;
    }
  }
  return 0;
}
