// The parent's side of an isolated worker: `attnbench worker` started as a child process (never a
// fork of a process that holds a CUDA context), kept up across points so that its start-up is paid
// once, and replaced after it dies, hangs or reports a sticky CUDA error.
#pragma once

#include "isolate/protocol.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace attnbench {

// A worker loads LibTorch, CUDA and every plugin before its hello.
inline constexpr double kWorkerStartTimeoutS = 300;
// A plugin that has not finished loading (its static initialisers and factory) by then hangs: the
// worker is killed and the next one starts without that file.
inline constexpr double kPluginLoadTimeoutS = 60;
// How long a worker whose channel closed may take to end before it is killed.
inline constexpr double kChannelClosedGraceS = 5;

// What a worker answered for one (point, backend): its records, or why there are none.
struct WorkerAnswer {
  std::optional<BackendRecords> records;
  Status status = Status::ok;  // crashed or timeout when there are no records
  std::string reason;
};

class WorkerClient {
 public:
  // Starts the first worker and waits for its hello (throws std::runtime_error if it never comes).
  // A plugin whose loading takes a worker down (crash, abort, or no progress within
  // kPluginLoadTimeoutS) is left out of the next worker, and the hello lists it as a failure with
  // the reason. `visible_device`: set, every worker sees only that GPU (CUDA_VISIBLE_DEVICES).
  WorkerClient(std::string exe, BackendSources sources, double start_timeout_s,
               std::optional<std::string> visible_device = std::nullopt);
  ~WorkerClient();
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  const Hello& hello() const { return hello_; }
  double start_seconds() const { return start_seconds_; }  // the last worker's start, to its hello
  int starts() const { return starts_; }

  // Sent to this worker and to every worker started after it.
  void setup(const RunOptions& options);

  // Measures one (point, backend); a worker that dies, or has not answered within `timeout_s`, is
  // replaced (killed first), and the answer says what happened and in which pass.
  // A worker that ends during a backend's measurement after other backends ran in it may have been
  // ended by them (a thread or a timer their code left running): the backend is measured once more
  // in a fresh worker. Fine there, the ending is charged to those others (all of them: which one
  // left it is not known; a backend ended by what it left itself at an earlier point charges them
  // wrongly): their rows from then on say so (Flag::ended_a_worker) and each of their
  // measurements gets a worker that retires after it. Ended there too, the backend's own crash is
  // its row, and it is not measured twice again.
  WorkerAnswer measure(const Point& point, const std::string& backend, double timeout_s);

 private:
  struct Process;
  void start();
  bool try_start();  // false: a plugin took the worker down while loading (now in lost_plugins_)
  // Reaps the worker and says how it ended: "was killed by signal 11 (SIGSEGV: ...)"; one still
  // running kChannelClosedGraceS after its channel closed is killed.
  std::string ended();
  // Gives the worker up (killing it if it still runs) and says why there are no records.
  WorkerAnswer lost(Status status, const std::string& reason);
  // A backend charged with ending a worker: its rows say so, and its worker retires after it.
  WorkerAnswer charged_rule(WorkerAnswer answer, const std::string& backend);
  // One request to the current worker (started if there is none); `worker_ended` is set when
  // the worker's process ended during it (not a timeout, a garbled answer or a sticky error).
  WorkerAnswer measure_once(const Point& point, const std::string& backend, double timeout_s,
                            bool& worker_ended);

  std::string exe_;
  BackendSources sources_;
  double start_timeout_s_;
  std::optional<std::string> visible_device_;
  std::vector<LoadFailure> lost_plugins_;  // files that took a worker down while loading
  std::optional<std::string> setup_line_;
  std::unique_ptr<Process> process_;
  std::vector<std::string> measured_here_;  // backends the current worker measured, each once
  std::vector<std::string> charged_;        // backends charged with ending a worker
  std::vector<std::string> crashed_alone_;  // backends whose worker ended with nothing else run
  Hello hello_;
  double start_seconds_ = 0;
  int starts_ = 0;
};

}  // namespace attnbench
