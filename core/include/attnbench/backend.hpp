// attnbench's backend interface and the problem types it takes: what a plugin implements and the
// harness calls. No Boost here; a plugin includes <attnbench/plugin.hpp>, which adds the export
// macro.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace at {
class Tensor;  // plugins include ATen themselves; the harness's non-torch code need not
}

namespace attnbench {

// Bump whenever a type in this header changes layout or meaning. 2: kv_heads, seq_len_kv,
// direction and the backward pass. 3: fp8_e4m3 and the inputs' per-tensor scales. 4: ragged
// batches, paged KV caches, sliding windows and softcap; Inputs carry the Problem; Support::feed.
inline constexpr int kPluginAbiVersion = 4;

// fp8_e4m3: q, k, v are float8_e4m3fn, each quantized with a per-tensor scale (Inputs::q_scale).
enum class DType { f16, bf16, f32, fp8_e4m3 };
enum class Device { cpu, cuda };
enum class Direction { fwd, bwd };  // bwd: the harness times the backward pass only
enum class KvLayout { contiguous, paged };
enum class PageOrder { in_order, shuffled };  // how a paged cache's page table is filled

// One attention problem. Two layouts:
//  - uniform (every sequence seq_len queries and seq_len_kv keys, contiguous): q is [batch, heads,
//    seq_len, head_dim]; k and v are [batch, kv_heads, seq_len_kv, head_dim]; all contiguous.
//  - packed (packed(): ragged lengths or a paged cache): q is [total_q, heads, head_dim], the
//    sequences one after another (sequence b's rows start at cu_seqlens_q[b]); k and v are
//    [total_kv, kv_heads, head_dim] likewise, or with kv_layout paged two caches [pages,
//    page_size, kv_heads, head_dim] read through the page table. The output is shaped like q.
//   kv_heads < heads is grouped-query attention: query head h reads kv head h / (heads / kv_heads).
//   A query block shorter than its keys (decode: 1 query) sits at the end of them: the mask is
//   aligned bottom-right, as in FlashAttention 2.1+ and cuDNN. Query i of a sequence with s
//   queries and s_kv keys stands at key position i + s_kv - s and sees the keys j with
//   pos - window_left <= j <= pos + window_right (-1: unbounded); causal makes window_right 0.
struct Problem {
  int64_t batch = 1;
  int64_t heads = 1;
  int64_t kv_heads = 1;  // divides heads
  int64_t seq_len = 1;     // queries per sequence; ragged: the longest sequence's
  int64_t seq_len_kv = 1;  // keys per sequence; ragged: the longest sequence's
  int64_t head_dim = 1;
  DType dtype = DType::bf16;
  bool causal = false;
  Device device = Device::cpu;
  Direction direction = Direction::fwd;
  // The lengths as the sweep wrote them ("" when every sequence is seq_len long): a list
  // "100,2000,37", "uniform(LO,HI)", "normal(MEAN,STD)", "lognormal(MEDIAN,SIGMA)" or
  // "histogram(FILE)"; q_lens and kv_lens are the lengths drawn from them (batch entries each, or
  // empty: uniform), the same for every backend of a run.
  std::string seq_lens, seq_lens_kv;
  std::vector<int64_t> q_lens, kv_lens;
  KvLayout kv_layout = KvLayout::contiguous;
  int64_t page_size = 0;  // tokens per page; paged only
  PageOrder page_order = PageOrder::in_order;
  int64_t window_left = -1, window_right = -1;  // keys seen behind and ahead; -1: unbounded
  double softcap = 0;  // > 0: each score s becomes softcap * tanh(s / softcap) before the softmax

  int64_t group_size() const { return heads / kv_heads; }  // query heads per kv head
  bool ragged() const { return !q_lens.empty() || !kv_lens.empty(); }
  bool paged() const { return kv_layout == KvLayout::paged; }
  bool packed() const { return ragged() || paged(); }
  bool windowed() const { return window_left >= 0 || (window_right >= 0 && !causal); }
  int64_t q_len(int64_t b) const { return q_lens.empty() ? seq_len : q_lens[b]; }
  int64_t kv_len(int64_t b) const { return kv_lens.empty() ? seq_len_kv : kv_lens[b]; }
  // The window's right edge with the mask applied: 0 under causal, -1 when unbounded.
  int64_t right_edge() const { return causal ? 0 : window_right; }
  // The variants beyond a uniform, contiguous batch ("ragged lengths, a window"), for a
  // refusal's reason; empty when there are none.
  std::string variants() const {
    std::string out;
    auto add = [&out](bool has, const char* what) {
      if (has) out += (out.empty() ? "" : ", ") + std::string(what);
    };
    add(ragged(), "ragged lengths");
    add(paged(), "a paged KV cache");
    add(windowed(), "a sliding window");
    add(softcap > 0, "a softcap");
    return out;
  }
};

struct Support {
  bool supported = true;
  std::string reason;  // why not, for the report; empty when supported
  // How the backend is fed when it runs the problem through something other than its own entry
  // point for it ("padded to the longest sequence, masked"): the row's `feed`. Empty: native.
  std::string feed;

  static Support yes() { return {}; }
  static Support no(std::string why) { return {false, std::move(why), ""}; }
  static Support fed(std::string how) { return {true, "", std::move(how)}; }
};

// Owned by the harness; valid for the duration of one forward() call, or for the life of the
// BackwardPass made from them.
struct Inputs {
  const Problem& problem;
  const at::Tensor& q;
  const at::Tensor& k;  // packed and paged: the key cache [pages, page_size, kv_heads, head_dim]
  const at::Tensor& v;
  // Uniform layout: [seq_len, seq_len_kv] bool, true = masked out (the causal mask and the window,
  // aligned bottom-right); null when nothing is masked. Null in the packed layout.
  const at::Tensor* mask;
  double scale;  // softmax scale, 1/sqrt(head_dim)
  // fp8_e4m3 only (1 otherwise): a value is its fp8 number times its tensor's scale (the
  // "descale" of FlashAttention-3 and cuDNN). The output is bf16, or fp8_e4m3 holding out / v_scale
  // (attention's output is a convex combination of v's rows, so that never overflows).
  double q_scale = 1, k_scale = 1, v_scale = 1;
  // Packed layout only (null otherwise), int32 on q's device: cu_seqlens_q [batch + 1] (sequence
  // b's query rows are cu_seqlens_q[b] .. cu_seqlens_q[b + 1]), cu_seqlens_kv likewise for a
  // contiguous cache, kv_lens [batch] (keys of sequence b), and with a paged cache the page table
  // [batch, pages per sequence]: token t of sequence b is row t % page_size of page
  // page_table[b][t / page_size] (entries past a sequence's last page are 0).
  const at::Tensor* cu_seqlens_q = nullptr;
  const at::Tensor* cu_seqlens_kv = nullptr;
  const at::Tensor* kv_lens = nullptr;
  const at::Tensor* page_table = nullptr;
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
  // exception is an `error` row. A backend that runs a variant (ragged lengths, a window, a
  // softcap, a paged cache) by other means than a native entry point says how in
  // Support::fed(how); one that would have to pad, gather or drop a variant silently says no.
  virtual Support supports(const Problem& problem) const = 0;
  // Returns the attention output, shaped like q (uniform [batch, heads, seq_len, head_dim],
  // packed [total_q, heads, head_dim]): in q's dtype for fp16, bf16
  // and fp32; for fp8_e4m3 in bf16, or fp8_e4m3 holding out / v_scale. The contract, checked by
  // the harness: launch on PyTorch's current stream (at::cuda::getCurrentCUDAStream()), never a
  // stream of your own; compute every call (no memoized or cached output: the harness changes the
  // inputs and checks again); leave the inputs unchanged (each is fingerprinted before and after:
  // a backend that writes into one is `wrong`); no printing or synchronization.
  virtual at::Tensor forward(const Inputs& inputs) = 0;
  // For direction bwd: runs the forward of `inputs` and returns its backward. A backend without
  // one keeps this default; its bwd points say unsupported.
  virtual std::unique_ptr<BackwardPass> prepare_backward(const Inputs& /*inputs*/) {
    return nullptr;
  }
};

}  // namespace attnbench
