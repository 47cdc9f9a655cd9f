// Finding and loading FlashAttention-3's op library, and calling its forward op by argument name.
#pragma once

#include <ATen/core/ivalue.h>

#include <map>
#include <string>
#include <vector>

namespace attnbench::fa3 {

// What a wheel was built with (its *_config.py: FLASHATTENTION_DISABLE_* flags). fa3-fwd 0.0.3:
// softcap and varlen, no paged KV, no local (window), no fp16, and q·k and v of different widths
// (HDIMDIFF192: 192 / 128, MLA's prefill; HDIMDIFF64: 64 / 512 with `qv`, MLA's absorbed decode);
// tokenspeed-fa3: paged, local and fp16, no softcap.
struct Features {
  bool fp16 = false, paged = false, local = false, softcap = false, varlen = true;
  bool hdimdiff192 = false, hdimdiff64 = false;
};

struct Library {
  std::string path;       // the loaded _C.abi3.so
  std::string package;    // "fa3-fwd" or "tokenspeed-fa3"
  std::string op;         // "fa3_fwd::fwd" or "flash_attn_3::fwd"
  Features features;
  std::string error;      // why it was not found or not loaded; empty when loaded
  bool found() const { return error.empty(); }
};

// Loaded once per process: $ATTNBENCH_FA3_LIB (the .so itself) alone, or else every package found
// in fa3_fwd/ and flash_attn_3/ under the $PYTHONPATH entries and the site-packages that holds
// LibTorch (both can be loaded: their ops have their own namespaces). Never empty: when nothing is
// found, one entry whose error says where it looked.
const std::vector<Library>& libraries();

// Calls the forward op with these arguments (by schema name; the rest take their defaults) and
// returns its first output. Errors FA3 raises for a shape it cannot run become
// attnbench::Unsupported.
at::Tensor call_forward(const Library& lib, const std::map<std::string, c10::IValue>& args);

}  // namespace attnbench::fa3
