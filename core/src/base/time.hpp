// Wall-clock time as reports write it.
#pragma once

#include <string>

namespace attnbench {

std::string utc_now_iso8601();  // "2026-12-02T22:52:12Z"

}  // namespace attnbench
