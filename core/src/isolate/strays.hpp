// What a worker's backends start ends with the worker, whatever it did to leave. Before the worker
// is killed, end_descendants() kills what is below it by parent pid (its forks, and a process of
// its own session: setsid); what a double fork handed on while the worker lived comes to this
// process (adopt_orphans(): prctl PR_SET_CHILD_SUBREAPER), not init, and reap_strays() ends and
// reaps it and every zombie, leaving the workers this process runs (start_listed) alone.
#pragma once

#include <sys/types.h>

#include <functional>

namespace attnbench {

void adopt_orphans();
// Runs `start` (which starts a worker and gives its pid) and lists the worker as running, both
// before any stray scan can see it; unlist_worker() once it has been waited for.
pid_t start_listed(const std::function<pid_t()>& start);
void unlist_worker(pid_t worker);
void end_descendants(pid_t worker);
// Waits for `pid`, a child of this process, however it ends (EINTR retried).
void wait_for(pid_t pid);
// Ends and reaps every child of this process that is not a listed worker. Called each time a
// worker ends.
void reap_strays();

}  // namespace attnbench
