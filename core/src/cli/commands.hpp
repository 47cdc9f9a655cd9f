// attnbench's subcommands, one file each. Each file registers its own options with add_<name>()
// and main.cpp is the list of them; main catches errors once: InputError -> exit 2, anything else
// -> exit 1.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace attnbench {

struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
  // Needs LibTorch: attnbench hands it to attnbench-measure (a run only with --isolation none).
  std::function<bool()> needs_measure = [] { return false; };
};

// --plugin-dir's help, shared by list, run and worker.
extern const char* const kPluginDirHelp;

Subcommand add_list(CLI::App& app);
Subcommand add_run(CLI::App& app);
Subcommand add_compare(CLI::App& app);
Subcommand add_summary(CLI::App& app);
Subcommand add_export(CLI::App& app);
Subcommand add_merge(CLI::App& app);
Subcommand add_plot(CLI::App& app);
Subcommand add_columns(CLI::App& app);
// These need LibTorch; attnbench-measure only (ATTNBENCH_WITH_MEASURE).
Subcommand add_worker(CLI::App& app);
Subcommand add_calibrate(CLI::App& app);

// attnbench-measure, beside this executable: the worker and every command that needs LibTorch.
std::string measure_executable();

// The commit the binary was built from (or $ATTNBENCH_GIT_SHA, for trees copied without .git).
std::string git_sha();
std::string build_git_sha();  // generated at build time by cmake/git_sha.cmake

}  // namespace attnbench
