// Wall-clock time as reports write it.
#pragma once

#include <cstdint>
#include <string>

namespace attnbench {

std::string utc_now_iso8601();  // "2026-12-02T22:52:12Z"
std::string machine_name();     // this host's name (gethostname)

// The steady clock in nanoseconds: the time base of traces.
int64_t steady_now_ns();

}  // namespace attnbench
