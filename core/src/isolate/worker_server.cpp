#include "isolate/worker_server.hpp"

#include "base/errors.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace attnbench {

int serve_worker(WorkerSide& side, int protocol_fd) {
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
  send(hello_message(side.start(send)));

  bool set_up = false;
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
      side.setup(options);
      set_up = true;
    } else if (m.type == "measure") {
      if (!set_up || !side.has_backend(m.backend))
        die("the worker has no setup or no backend '" + m.backend + "'");
      BackendRecords records;
      std::string failed;  // an exception out of the runner: the worker cannot go on
      try {
        records = side.measure(m.point, m.backend);
      } catch (const std::exception& e) {
        failed = first_line(e.what());
      }
      // A sticky CUDA error is the cause whenever there is one, thrown or not.
      if (const auto sticky = side.broken())
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
