#include "isolate/worker_loop.hpp"
#include "base/errors.hpp"
#include "isolate/protocol.hpp"
#include "measure/runner.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

namespace attnbench {

int worker_loop(const BackendSources& sources, const std::vector<std::string>& skip,
                int protocol_fd) {
  std::FILE* channel = fdopen(protocol_fd, "w");
  if (!channel) {
    std::cerr << "attnbench worker: no protocol channel on fd " << protocol_fd << '\n';
    return 2;
  }
  auto send = [&](const std::string& line) {
    std::fputs(line.c_str(), channel);
    std::fputc('\n', channel);
    std::fflush(channel);
  };
  auto die = [&](const std::string& reason) {
    send(fatal_message(reason));
    std::_Exit(3);
  };
  // Killed with the parent, whatever ended it (kill -9 included): a backend that hangs must not
  // keep a GPU busy forever. The parent's pid tells a parent already gone before prctl ran.
  if (const char* parent = std::getenv("ATTNBENCH_WORKER_PARENT")) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (std::to_string(::getppid()) != parent) std::_Exit(3);
  }

  const HostInfo host = query_host();
  // Each plugin announced before it loads: if loading it takes this worker down, the parent knows
  // which one did, and starts the next worker without it.
  PluginSet plugins = load_plugins(plugin_search_path(sources.plugin_dirs), skip,
                                   [&](const std::string& file) { send(loading_message(file)); });
  load_python_backends(
      sources.python, skip,
      [&](const std::string& id, const std::string& backend) {
        send(loading_message(id, backend));
      },
      plugins);
  Hello hello{host, {}, plugins.failures};
  for (const auto& b : plugins.backends) hello.backends.push_back({b.name, b.description, b.file});
  send(hello_message(hello));

  std::unique_ptr<Runner> runner;
  std::string pass = "setup";
  for (std::string line; std::getline(std::cin, line);) {
    const Message m = parse_message(line);
    if (m.type == "quit") break;
    if (m.type == "setup") {
      RunOptions options = m.options;
      options.on_pass = [&](const std::string& name) {
        pass = name;
        send(pass_message(name));
      };
      runner = std::make_unique<Runner>(host, options);
    } else if (m.type == "measure") {
      const LoadedBackend* backend = plugins.find(m.backend);
      if (!runner || !backend) die("the worker has no setup or no backend '" + m.backend + "'");
      BackendRecords records;
      std::string failed;  // an exception out of the runner: the worker cannot go on
      try {
        records = runner->measure(m.point, *backend);
      } catch (const std::exception& e) {
        failed = first_line(e.what());
      }
      // A sticky CUDA error is the cause whenever there is one, thrown or not.
      if (const auto sticky = sticky_cuda_error(host))
        die("sticky CUDA error (" + *sticky + ") after pass '" + pass + "'");
      if (!failed.empty()) die("the worker failed after pass '" + pass + "': " + failed);
      send(records_message(records));
      // Memory it kept would make later rows oom: the parent starts a new worker.
      if (leaked_device_memory(records)) break;
    }
  }
  return 0;
}

}  // namespace attnbench
