#include "isolate/worker_client.hpp"

#include "isolate/strays.hpp"

#define BOOST_PROCESS_USE_STD_FS  // Boost 1.83; 1.74 ignores it and stays header-only for what is
                                  // used here
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/env.hpp>
#include <boost/process/environment.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/posix.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace attnbench {

namespace bp = boost::process;

struct WorkerClient::Process {
  bp::child child;
  int to_worker = -1;    // the worker's stdin
  int from_worker = -1;  // its protocol channel
  std::string buffer;    // bytes read past the last full line

  ~Process() {
    if (to_worker >= 0) ::close(to_worker);
    if (from_worker >= 0) ::close(from_worker);
    if (child.valid()) {
      // What backend code started ends first, while it is still below the worker: its forks
      // (in the worker's process group, worker_server.cpp) and what left that group (setsid).
      end_descendants(child.id());
      if (child.running()) {
        std::error_code ec;
        child.terminate(ec);
      }
      // The group's id is not reused while a member lives.
      ::killpg(child.id(), SIGKILL);
      wait_for(child.id());
      unlist_worker(child.id());
      // What left the group (setsid) or lost its parent with the worker is this process's now.
      reap_strays();
    }
  }

  bool send(const std::string& line) {
    const std::string data = line + "\n";
    size_t done = 0;
    while (done < data.size()) {
      const ssize_t n = ::write(to_worker, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;  // EPIPE: the worker is gone
      done += static_cast<size_t>(n);
    }
    return true;
  }

  // The next line, or nullopt at end of file or when `deadline` passes (then timed_out is set).
  std::optional<std::string> read_line(std::chrono::steady_clock::time_point deadline,
                                       bool& timed_out) {
    timed_out = false;
    while (true) {
      if (const size_t eol = buffer.find('\n'); eol != std::string::npos) {
        std::string line = buffer.substr(0, eol);
        buffer.erase(0, eol + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        return std::nullopt;
      }
      pollfd pfd{from_worker, POLLIN, 0};
      const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) continue;
      char chunk[65536];
      const ssize_t n = ::read(from_worker, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;  // the worker closed its end: it is gone
      buffer.append(chunk, static_cast<size_t>(n));
    }
  }
};

namespace {

std::chrono::steady_clock::time_point after(double seconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(seconds));
}

void pipe_pair(int fds[2]) {
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
}

// Ends the reason of every answer without records.
constexpr const char* kNewWorkerNext = "; the next (point, backend) gets a new worker";

// Without kNewWorkerNext.
std::string plain_reason(const std::string& reason) {
  return reason.substr(0, reason.rfind(kNewWorkerNext));
}

bool among(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

}  // namespace

WorkerClient::WorkerClient(std::string exe, BackendSources sources, double start_timeout_s,
                           std::optional<std::string> visible_device)
    : exe_(std::move(exe)),
      sources_(std::move(sources)),
      start_timeout_s_(start_timeout_s),
      visible_device_(std::move(visible_device)) {
  // A worker that dies mid-request is an answer, not the end of the parent.
  std::signal(SIGPIPE, SIG_IGN);
  start();
}

WorkerClient::~WorkerClient() {
  if (process_) process_->send(quit_message());
  process_.reset();  // waits for it (it quits), then ends and reaps what it left behind
}

void WorkerClient::start() {
  while (!try_start()) {
  }
  if (setup_line_) process_->send(*setup_line_);
}

bool WorkerClient::try_start() {
  process_.reset();
  measured_here_.clear();
  const auto t0 = std::chrono::steady_clock::now();
  int in[2], out[2];
  pipe_pair(in);
  pipe_pair(out);
  auto p = std::make_unique<Process>();
  std::vector<std::string> args = {"worker", "--protocol-fd", "3"};
  for (const auto& dir : sources_.plugin_dirs) args.insert(args.end(), {"--plugin-dir", dir});
  for (const auto& spec : sources_.specs)
    args.insert(args.end(), {"--backend", backend_spec_arg(spec)});
  for (const auto& lost : lost_plugins_) args.insert(args.end(), {"--skip-plugin", lost.file});
  // The worker reads requests on stdin and answers on fd 3, and moves both out of backend code's
  // reach before it loads any (worker_server.cpp); its stdout and stderr stay the parent's, so
  // whatever a plugin prints cannot corrupt the protocol.
  bp::environment env = boost::this_process::environment();
  if (visible_device_) env["CUDA_VISIBLE_DEVICES"] = *visible_device_;
  env["ATTNBENCH_WORKER_PARENT"] = std::to_string(::getpid());  // it dies with this process
  adopt_orphans();
  start_listed([&] {
    p->child = bp::child(bp::exe = exe_, bp::args = args, env, bp::posix::fd.bind(0, in[0]),
                         bp::posix::fd.bind(3, out[1]));
    return p->child.id();
  });
  ::close(in[0]);
  ::close(out[1]);
  p->to_worker = in[1];
  p->from_worker = out[0];
  process_ = std::move(p);
  ++starts_;

  // Until the hello: "loading" lines name each plugin as the worker loads it.
  const char* load_env = std::getenv("ATTNBENCH_PLUGIN_LOAD_TIMEOUT_S");  // tests shorten it
  const double load_timeout =
      load_env && std::atof(load_env) > 0 ? std::atof(load_env) : kPluginLoadTimeoutS;
  std::optional<Message> loading;  // what the worker said it was loading
  auto deadline = after(start_timeout_s_);
  while (true) {
    bool timed_out = false;
    const auto line = process_->read_line(deadline, timed_out);
    if (!line && loading) {  // that plugin took the worker down: leave it out of the next one
      std::string why;
      if (timed_out) {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%g", load_timeout);
        why = std::string("hung while loading (no progress within ") + seconds +
              " s); the worker was killed";
      } else {
        why = "the worker " + ended() + " while loading it";
      }
      process_.reset();
      LoadFailure lost{loading->name, why, loading->kind};
      // A plugin's backend is the one its file is named for.
      lost.lost_backend = loading->backend.empty() ? backend_of_file(loading->name) : loading->backend;
      lost_plugins_.push_back(std::move(lost));
      return false;
    }
    if (!line) {
      const std::string why =
          timed_out ? "it sent no hello within " + std::to_string(start_timeout_s_) + " s"
                    : "it " + ended();
      process_.reset();
      throw std::runtime_error("the worker (" + exe_ + " worker) did not start: " + why);
    }
    const Message m = parse_message(*line);
    if (m.type == "loading") {
      loading = m;
      deadline = after(load_timeout);
      continue;
    }
    if (m.type != "hello")
      throw std::runtime_error("the worker sent '" + m.type + "' instead of its hello");
    hello_ = m.hello;
    hello_.failures.insert(hello_.failures.end(), lost_plugins_.begin(), lost_plugins_.end());
    break;
  }
  start_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return true;
}

void WorkerClient::setup(const RunOptions& options) {
  setup_line_ = setup_message(options);
  process_->send(*setup_line_);
}

std::string WorkerClient::ended() {
  // A worker whose channel closed has ended, or is about to; one that is still running after a
  // grace period closed it itself (or a backend did) and waits on its requests: it is killed,
  // never waited on without end.
  std::error_code ec;
  const auto grace = after(kChannelClosedGraceS);
  while (process_->child.running(ec) && std::chrono::steady_clock::now() < grace)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (process_->child.running(ec)) {
    process_->child.terminate(ec);
    process_->child.wait(ec);
    return "closed its protocol channel and kept running (killed)";
  }
  process_->child.wait(ec);
  const int status = process_->child.native_exit_code();
  std::string how;
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    how = "was killed by signal " + std::to_string(sig) + " (SIG" + (name ? name : "?") + ": " +
          strsignal(sig) + ")";
  } else if (WIFEXITED(status)) {
    how = "exited with code " + std::to_string(WEXITSTATUS(status));
  } else {
    how = "ended (wait status " + std::to_string(status) + ")";
  }
  return how;
}

WorkerAnswer WorkerClient::lost(Status status, const std::string& reason) {
  process_.reset();  // kills it if it still runs, and reaps it
  return {std::nullopt, status, reason + kNewWorkerNext};
}

WorkerAnswer WorkerClient::measure(const Point& point, const std::string& backend,
                                   double timeout_s) {
  std::vector<std::string> before;  // who else ran in the worker this request goes to
  if (process_)
    for (const auto& b : measured_here_)
      if (b != backend) before.push_back(b);
  bool ended = false;
  WorkerAnswer answer = measure_once(point, backend, timeout_s, ended);
  if (!ended) return charged_rule(std::move(answer), backend);
  if (before.empty() || among(crashed_alone_, backend)) {  // its own crash
    if (!among(crashed_alone_, backend)) crashed_alone_.push_back(backend);
    return answer;
  }
  // Ended after others ran there: once more, alone in a fresh worker.
  const std::string first = plain_reason(answer.reason);
  WorkerAnswer again = measure_once(point, backend, timeout_s, ended);
  if (ended) {
    crashed_alone_.push_back(backend);
    again.reason = plain_reason(again.reason) + " (as did the worker before, in which " +
                   listed(before) + " had run)" + kNewWorkerNext;
    return again;
  }
  const std::string ended_first = "the first worker to measure it ended (" + first + ") after " +
                                  listed(before) + " had run in it";
  if (!again.records) {  // a timeout there, say: that proves nothing of the others
    again.reason = plain_reason(again.reason) + "; " + ended_first + kNewWorkerNext;
    return again;
  }
  for (const auto& b : before)
    if (!among(charged_, b)) charged_.push_back(b);
  again.records->notes += (again.records->notes.empty() ? "" : "; ") + ended_first +
                          "; measured again in a fresh worker, and the ending is charged to " +
                          listed(before) + " (flag ended_a_worker from here on)";
  return charged_rule(std::move(again), backend);
}

WorkerAnswer WorkerClient::charged_rule(WorkerAnswer answer, const std::string& backend) {
  if (answer.records && among(charged_, backend)) {
    for (Row& row : answer.records->rows) row.add_flag(Flag::ended_a_worker);
    process_.reset();  // its threads end with it: the next (point, backend) gets a new worker
  }
  return answer;
}

WorkerAnswer WorkerClient::measure_once(const Point& point, const std::string& backend,
                                        double timeout_s, bool& worker_ended) {
  worker_ended = false;
  if (!process_) start();
  if (!among(measured_here_, backend)) measured_here_.push_back(backend);
  std::string pass = "request";
  if (process_->send(measure_message(point, backend))) {
    const auto deadline = after(timeout_s);
    bool timed_out = false;
    while (const auto line = process_->read_line(deadline, timed_out)) {
      Message m;
      try {
        m = parse_message(*line);
      } catch (const std::exception& e) {  // something in the worker wrote on the channel
        return lost(Status::crashed, std::string("the worker's answer was garbled (") + e.what() +
                                         ") in pass '" + pass + "'; the worker was killed");
      }
      if (m.type == "pass") pass = m.name;
      if (m.type == "records") {
        if (leaked_device_memory(m.records)) process_.reset();  // it retires: a new one next
        return {m.records, Status::ok, ""};
      }
      if (m.type == "fatal") return lost(Status::crashed, m.reason + "; the worker " + ended());
    }
    if (timed_out) {
      char seconds[64];
      std::snprintf(seconds, sizeof seconds, "%g", timeout_s);
      return lost(Status::timeout, "no answer within " + std::string(seconds) +
                                       " s (measurement.timeout_s) in pass '" + pass +
                                       "'; the worker was killed");
    }
  }
  worker_ended = true;
  return lost(Status::crashed, "the worker " + ended() + " in pass '" + pass + "'");
}

}  // namespace attnbench
