// A stable 64-bit hash of text (FNV-1a): the same on every machine and in every build.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace attnbench {

inline uint64_t fnv1a(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The hash as 16 hex digits: the config fingerprint's form, the source kind's cache key.
inline std::string fnv1a_hex(std::string_view text) {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(fnv1a(text)));
  return out;
}

}  // namespace attnbench
