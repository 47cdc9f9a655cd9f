#include "isolate/strays.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace attnbench {

namespace {

// The workers this process runs now (several with --devices), which stray reaping leaves alone.
std::mutex live_mutex;
std::set<pid_t>& live_workers() {
  static std::set<pid_t> pids;
  return pids;
}

// Every process by its /proc entry: pid, state and parent's pid.
struct ProcEntry {
  pid_t pid;
  char state;
  pid_t ppid;
};
std::vector<ProcEntry> processes() {
  std::vector<ProcEntry> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...: comm may hold spaces and parentheses; read after the last ')'.
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    char state = 0;
    long ppid = 0;
    if (rest >> state >> ppid) out.push_back({std::stoi(name), state, static_cast<pid_t>(ppid)});
  }
  return out;
}

// The processes below `root` (its children, theirs, ...), whatever group or session they are in.
std::vector<pid_t> descendants(pid_t root) {
  const std::vector<ProcEntry> all = processes();
  std::vector<pid_t> out = {root};
  for (size_t i = 0; i < out.size(); ++i)
    for (const ProcEntry& e : all)
      if (e.ppid == out[i]) out.push_back(e.pid);
  out.erase(out.begin());
  return out;
}

}  // namespace

// Waits for `pid` whoever asked before: Boost.Process's terminate() polls it once and may call it
// gone while it is still dying, its children not yet handed on (then a scan for strays missed
// them).
void wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

pid_t start_listed(const std::function<pid_t()>& start) {
  std::lock_guard<std::mutex> lock(live_mutex);  // started and listed before any stray scan
  const pid_t pid = start();
  live_workers().insert(pid);
  return pid;
}

void unlist_worker(pid_t worker) {
  std::lock_guard<std::mutex> lock(live_mutex);
  live_workers().erase(worker);
}

void adopt_orphans() {
  // What a backend's code starts and detaches whose parent ends before its worker does (a
  // double fork) is re-parented to this process, not to init: reap_strays() ends and reaps it.
  static const bool once = [] {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    return true;
  }();
  (void)once;
}

void end_descendants(pid_t worker) {
  // Ended before their worker, while they are still below it: a process of its own session
  // (setsid) is outside the worker's group, and once the worker is gone only its parent's pid
  // would have said where it came from.
  for (const pid_t pid : descendants(worker)) ::kill(pid, SIGKILL);
}

void reap_strays() {
  // Held throughout: a worker another thread is starting (forked, not yet in the set) waits for
  // the scan instead of being taken for a stray.
  std::lock_guard<std::mutex> lock(live_mutex);
  const std::set<pid_t>& live = live_workers();
  const pid_t self = ::getpid();
  // Until none is left: each one ended may have handed its own children on to this process.
  for (bool found = true; found;) {
    found = false;
    for (const ProcEntry& e : processes()) {
      if (e.ppid != self || live.count(e.pid)) continue;
      found = true;
      if (e.state != 'Z') ::kill(e.pid, SIGKILL);
      wait_for(e.pid);
    }
  }
}

}  // namespace attnbench
