// attnbench plugin API. This is the only header a backend plugin needs.
//
// A plugin is one shared library in plugins/<name>/ that defines a class derived from
// attnbench::Backend and exports it with ATTNBENCH_PLUGIN(ClassName). The harness:
//   1. reads `attnbench_abi_version` and the factory's symbol from the file, before loading it (no
//      code of the plugin runs, not even static initialisers), and refuses the library if the
//      version differs from kPluginAbiVersion or the factory is missing;
//   2. calls the exported factory once and keeps the library loaded while the backend lives;
//   3. for every point of a sweep asks supports(problem); when yes, it creates the inputs
//      (q, k, v, the causal mask) outside the timed region and calls forward() many times.
//
// forward() does the attention and nothing else: no input allocation, no synchronization, no
// printing. If it turns out at run time that the problem cannot be run (a forced kernel refuses a
// shape), throw attnbench::Unsupported with the reason in plain words; the row says so.
#pragma once

#include <boost/dll/alias.hpp>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace at {
class Tensor;  // plugins include ATen themselves; the harness's non-torch code need not
}

namespace attnbench {

// Bump whenever a type in this header changes layout or meaning.
inline constexpr int kPluginAbiVersion = 1;

enum class DType { f16, bf16, f32 };
enum class Device { cpu, cuda };

// One attention problem: q, k, v are [batch, heads, seq_len, head_dim], contiguous.
struct Problem {
  int64_t batch = 1;
  int64_t heads = 1;
  int64_t seq_len = 1;
  int64_t head_dim = 1;
  DType dtype = DType::bf16;
  bool causal = false;
  Device device = Device::cpu;
};

struct Support {
  bool supported = true;
  std::string reason;  // why not, for the report; empty when supported

  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

// Owned by the harness; valid for the duration of one forward() call.
struct Inputs {
  const at::Tensor& q;
  const at::Tensor& k;
  const at::Tensor& v;
  const at::Tensor* causal_mask;  // [seq_len, seq_len] bool, true = masked out; null unless causal
  double scale;                   // softmax scale, 1/sqrt(head_dim)
};

// Thrown by forward() when the backend cannot run the problem after all.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;         // short, unique: "flash"
  virtual std::string description() const = 0;  // one line for `attnbench list`
  // Cheap, static answer; the harness still treats Unsupported from forward() as "no".
  virtual Support supports(const Problem& problem) const = 0;
  // Returns the attention output [batch, heads, seq_len, head_dim] in the input dtype.
  virtual at::Tensor forward(const Inputs& inputs) = 0;
};

}  // namespace attnbench

// Exports the ABI version and a factory named attnbench_create_backend.
#define ATTNBENCH_PLUGIN(BackendClass)                                                   \
  extern "C" BOOST_SYMBOL_EXPORT const int attnbench_abi_version;                        \
  const int attnbench_abi_version = ::attnbench::kPluginAbiVersion;                      \
  namespace {                                                                            \
  std::unique_ptr<::attnbench::Backend> attnbench_make_backend() {                       \
    return std::make_unique<BackendClass>();                                             \
  }                                                                                      \
  }                                                                                      \
  BOOST_DLL_ALIAS(attnbench_make_backend, attnbench_create_backend)
