#include "cli/commands.hpp"
#include "plugins/plugin_loader.hpp"
#include "report/table.hpp"

#include <iostream>

namespace attnbench {

int cmd_list(const std::vector<std::string>& plugin_dirs) {
  const auto search = plugin_search_path(plugin_dirs);
  const PluginSet plugins = load_plugins(search);
  std::cout << "plugins in " << folder_list(search) << ":\n";
  TextTable table;
  table.header = {"backend", "description", "file"};
  for (const auto& b : plugins.backends) table.rows.push_back({b.name, b.description, b.file});
  table.print(std::cout, false);
  if (!plugins.failures.empty()) {
    std::cout << "\nnot loaded:\n";
    for (const auto& f : plugins.failures) std::cout << "  " << f.file << ": " << f.reason << '\n';
  }
  return 0;
}

}  // namespace attnbench
