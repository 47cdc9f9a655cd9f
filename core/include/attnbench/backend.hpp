// attnbench's backend interface and the problem types it takes: what a plugin implements and the
// harness calls. No Boost here; a plugin includes <attnbench/plugin.hpp>, which adds the export
// macro.
#pragma once

#include <cstdint>
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
