// Finding and loading FlashAttention-3's op library, and calling its forward op by argument name.
#pragma once

#include <ATen/core/ivalue.h>

#include <map>
#include <string>

namespace attnbench::fa3 {

struct Library {
  std::string path;       // the loaded _C.abi3.so
  std::string op;         // "fa3_fwd::fwd" or "flash_attn_3::fwd"
  bool has_fp16 = false;  // tokenspeed-fa3 builds fp16; fa3-fwd does not
  std::string error;      // why it was not found or not loaded; empty when loaded
  bool found() const { return error.empty(); }
};

// Loaded once per process. Looked for in $ATTNBENCH_FA3_LIB (the .so itself), then in
// fa3_fwd/ and flash_attn_3/ under every $PYTHONPATH entry and the site-packages that holds
// LibTorch.
const Library& library();

// Calls the forward op with these arguments (by schema name; the rest take their defaults) and
// returns its first output. Errors FA3 raises for a shape it cannot run become
// attnbench::Unsupported.
at::Tensor call_forward(const Library& lib, const std::map<std::string, c10::IValue>& args);

}  // namespace attnbench::fa3
