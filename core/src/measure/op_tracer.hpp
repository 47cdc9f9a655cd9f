// Host timeline of a few calls: every ATen op, autograd node and user scope (RecordFunction) with
// its start, end, thread and depth, for the trace pass.
#pragma once

#include "base/time.hpp"  // steady_now_ns: the time base of CpuSpan
#include "measure/pass_results.hpp"

#include <functional>
#include <vector>

namespace attnbench {

// Runs `body` with the callbacks installed on every thread (backward runs on autograd's threads)
// and returns what they saw, in start order.
std::vector<CpuSpan> record_cpu_spans(const std::function<void()>& body);

// This thread as CpuSpan names threads: pthread_self, and the OS id (gettid).
uint64_t this_thread_id();
uint32_t this_os_thread_id();

}  // namespace attnbench
