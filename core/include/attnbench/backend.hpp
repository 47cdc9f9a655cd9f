// attnbench's backend interface and the problem types it takes: what a plugin implements and the
// harness calls. No Boost here; a plugin includes <attnbench/plugin.hpp>, which adds the export
// macro.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace at {
class Tensor;  // plugins include ATen themselves; the harness's non-torch code need not
}

namespace attnbench {

// Bump whenever a type in this header changes layout or meaning. 2: kv_heads, seq_len_kv,
// direction and the backward pass. 3: fp8_e4m3 and the inputs' per-tensor scales.
inline constexpr int kPluginAbiVersion = 3;

// fp8_e4m3: q, k, v are float8_e4m3fn, each quantized with a per-tensor scale (Inputs::q_scale).
enum class DType { f16, bf16, f32, fp8_e4m3 };
enum class Device { cpu, cuda };
enum class Direction { fwd, bwd };  // bwd: the harness times the backward pass only

// One attention problem. q is [batch, heads, seq_len, head_dim]; k and v are
// [batch, kv_heads, seq_len_kv, head_dim]; all contiguous.
//   kv_heads < heads is grouped-query attention: query head h reads kv head h / (heads / kv_heads).
//   seq_len < seq_len_kv is a query block against a longer cache (decode: seq_len 1). A causal
//   mask is then aligned bottom-right, as in FlashAttention 2.1+ and cuDNN: query i sees keys
//   0 .. i + seq_len_kv - seq_len.
struct Problem {
  int64_t batch = 1;
  int64_t heads = 1;
  int64_t kv_heads = 1;  // divides heads
  int64_t seq_len = 1;
  int64_t seq_len_kv = 1;
  int64_t head_dim = 1;
  DType dtype = DType::bf16;
  bool causal = false;
  Device device = Device::cpu;
  Direction direction = Direction::fwd;

  int64_t group_size() const { return heads / kv_heads; }  // query heads per kv head
};

struct Support {
  bool supported = true;
  std::string reason;  // why not, for the report; empty when supported

  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

// Owned by the harness; valid for the duration of one forward() call, or for the life of the
// BackwardPass made from them.
struct Inputs {
  const at::Tensor& q;
  const at::Tensor& k;
  const at::Tensor& v;
  // [seq_len, seq_len_kv] bool, true = masked out, aligned bottom-right; null unless causal.
  const at::Tensor* causal_mask;
  double scale;  // softmax scale, 1/sqrt(head_dim)
  // fp8_e4m3 only (1 otherwise): a value is its fp8 number times its tensor's scale (the
  // "descale" of FlashAttention-3 and cuDNN). The output is bf16, or fp8_e4m3 holding out / v_scale
  // (attention's output is a convex combination of v's rows, so that never overflows).
  double q_scale = 1, k_scale = 1, v_scale = 1;
};

// One forward's backward, ready to run. The backward pass needs what its forward saved (the
// softmax statistics, the kernel's own workspace) and only the backend knows what that is, so the
// backend makes this object: prepare_backward() runs the forward and keeps that state outside the
// timed region, and run() is all the harness times. A backend built on ATen ops gets this from
// autograd (<attnbench/sdpa/autograd_backward.hpp>); a hand-written kernel returns its own, with
// no autograd::Function to write.
class BackwardPass {
 public:
  virtual ~BackwardPass() = default;
  // Sets dq, dk, dv (shaped and typed like q, k, v) to the gradients of sum(out * grad_out).
  // Called many times with the same grad_out; no synchronization, no printing.
  virtual void run(const at::Tensor& grad_out, at::Tensor& dq, at::Tensor& dk, at::Tensor& dv) = 0;
};

// Thrown by forward() or prepare_backward() when the backend cannot run the problem after all.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;         // short, unique: "flash"
  virtual std::string description() const = 0;  // one line for `attnbench list`
  // Cheap, static answer: Support::yes(), or Support::no(reason) with a reason a user can act on
  // (it is the row's `reason`). Unsupported thrown from forward() is a "no" too; any other
  // exception is an `error` row.
  virtual Support supports(const Problem& problem) const = 0;
  // Returns the attention output [batch, heads, seq_len, head_dim]: in q's dtype for fp16, bf16
  // and fp32; for fp8_e4m3 in bf16, or fp8_e4m3 holding out / v_scale. The contract, checked by
  // the harness: launch on PyTorch's current stream (at::cuda::getCurrentCUDAStream()), never a
  // stream of your own; compute every call (no memoized or cached output: the harness changes the
  // inputs and checks again); leave the inputs unchanged; no printing or synchronization.
  virtual at::Tensor forward(const Inputs& inputs) = 0;
  // For direction bwd: runs the forward of `inputs` and returns its backward. A backend without
  // one keeps this default; its bwd points say unsupported.
  virtual std::unique_ptr<BackwardPass> prepare_backward(const Inputs& /*inputs*/) {
    return nullptr;
  }
};

}  // namespace attnbench
