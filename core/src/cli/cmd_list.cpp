#include "cli/commands.hpp"
#include "plugins/plugin_loader.hpp"
#include "report/table.hpp"

#include <iostream>

namespace attnbench {

int cmd_list(const std::string& plugin_dir) {
  const auto dir = plugin_dir_or_default(plugin_dir);
  const PluginSet plugins = load_plugins(dir);
  std::cout << "plugins in " << dir.string() << ":\n";
  TextTable table;
  table.header = {"backend", "description", "file"};
  for (const auto& b : plugins.backends)
    table.rows.push_back(
        {b.name, b.description, std::filesystem::path(b.file).filename().string()});
  table.print(std::cout, false);
  if (!plugins.failures.empty()) {
    std::cout << "\nnot loaded:\n";
    for (const auto& f : plugins.failures) std::cout << "  " << f.file << ": " << f.reason << '\n';
  }
  return 0;
}

}  // namespace attnbench
