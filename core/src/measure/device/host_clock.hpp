// What the host core was doing while host time was measured: its effective clock, and how often
// the calling thread was preempted or moved to another core. Host time per call moved 15-32%
// between two identical runs on the H200's shared host; these say whether the machine did it.
#pragma once

#include <optional>

namespace attnbench {

// The effective clock of the core this thread runs on, in MHz: a chain of dependent 64-bit
// multiplies (3 cycles each on x86-64) timed with the steady clock. About 0.5 ms. nullopt off
// x86-64.
std::optional<double> host_clock_mhz();

// The calling thread's involuntary context switches so far (getrusage RUSAGE_THREAD).
long involuntary_switches();

// The core this thread runs on now (sched_getcpu).
int current_cpu();

}  // namespace attnbench
