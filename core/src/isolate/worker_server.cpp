#include "isolate/worker_server.hpp"

#include "base/errors.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

namespace attnbench {

namespace {

// The requests (stdin) and the answers (protocol_fd) moved to descriptors that backend code does
// not know, before any backend is loaded: a Python backend's os.close(3), or a thread of its that
// reads stdin, meets nothing of the protocol (stdin reads as empty). Close-on-exec: a backend's
// subprocesses (Inductor's compile workers) inherit neither.
struct Channels {
  std::FILE* requests = nullptr;
  std::FILE* answers = nullptr;
};

std::optional<Channels> private_channels(int protocol_fd) {
  constexpr int kAbove = 100;  // past the descriptors a process opens in its first moments
  const int requests = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, kAbove);
  const int answers = ::fcntl(protocol_fd, F_DUPFD_CLOEXEC, kAbove);
  const int empty = ::open("/dev/null", O_RDONLY);
  if (requests < 0 || answers < 0 || empty < 0 || ::dup2(empty, STDIN_FILENO) < 0) return {};
  ::close(empty);
  ::close(protocol_fd);
  Channels c{::fdopen(requests, "r"), ::fdopen(answers, "w")};
  if (!c.requests || !c.answers) return {};
  return c;
}

// The next request line without its newline; nullopt when the parent closed its end.
std::optional<std::string> next_line(std::FILE* requests) {
  char* data = nullptr;
  size_t capacity = 0;
  const ssize_t n = ::getline(&data, &capacity, requests);
  std::optional<std::string> line;
  if (n >= 0) line = std::string(data, static_cast<size_t>(n) - (n > 0 && data[n - 1] == '\n'));
  std::free(data);
  return line;
}

}  // namespace

int serve_worker(WorkerSide& side, int protocol_fd) {
  const std::optional<Channels> channels = private_channels(protocol_fd);
  if (!channels) {
    std::cerr << "attnbench worker: no protocol channel on fd " << protocol_fd << '\n';
    return 2;
  }
  std::FILE* channel = channels->answers;
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
    // A process group of its own, which the parent kills when it is done with this worker:
    // processes a backend forks do not outlive the run.
    ::setpgid(0, 0);
  }
  send(hello_message(side.start(send)));

  bool set_up = false;
  std::string pass = "setup";
  while (const std::optional<std::string> line = next_line(channels->requests)) {
    const Message m = parse_message(*line);
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
