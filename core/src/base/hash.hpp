// A stable 64-bit hash of text (FNV-1a): the same on every machine and in every build.
#pragma once

#include <cstdint>
#include <string_view>

namespace attnbench {

inline uint64_t fnv1a(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace attnbench
