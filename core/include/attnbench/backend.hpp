// attnbench's backend interface and the problem types it takes: what a plugin implements and the
// harness calls. No Boost here; a plugin includes <attnbench/plugin.hpp>, which adds the export
// macro.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace at {
class Tensor;  // plugins include ATen themselves; the harness's non-torch code need not
}

namespace attnbench {

// Bump whenever a type in this header changes layout or meaning. 2: kv_heads, seq_len_kv,
// direction and the backward pass. 3: fp8_e4m3 and the inputs' per-tensor scales. 4: ragged
// batches, paged KV caches, sliding windows and softcap; Inputs carry the Problem; Support::feed.
// 5: problem kinds (Problem::kind, MLA's shape), the v width, v inside k and the softmax scale in
// the Problem; Backend::kinds() and variants(). 6: Problem::kv_dtype (an fp8 KV cache under
// bf16 or fp16 queries, the variant "fp8_kv"), attention sinks (Problem::sinks, Inputs::sinks) and
// chunked local attention (Problem::chunk). 7: kinds' and variants' fields without a member of
// their own (Problem::extra: DSA's index_topk), their inputs by name (Inputs::input(): "sinks",
// "indices") in place of Inputs::sinks, the point's variants filled in by the harness
// (Problem::present), kind "dsa".
inline constexpr int kPluginAbiVersion = 7;

// fp8_e4m3: q, k, v are float8_e4m3fn, each quantized with a per-tensor scale (Inputs::q_scale).
enum class DType { f16, bf16, f32, fp8_e4m3 };
enum class Device { cpu, cuda };
enum class Direction { fwd, bwd };  // bwd: the harness times the backward pass only
enum class KvLayout { contiguous, paged };
enum class PageOrder { in_order, shuffled };  // how a paged cache's page table is filled

// MLA's widths (multi-head latent attention: DeepSeek-V3, Kimi K2, GLM-5), by the names of the
// models' config.json; Problem::kind "mla" only. Prefill (absorbed false): q and k of
// qk_nope_head_dim + qk_rope_head_dim features, the rope part last, v of v_head_dim. The absorbed
// decode: q of kv_lora_rank + qk_rope_head_dim (the nope part absorbed into the latent space)
// against one latent kv head of the same width, whose first kv_lora_rank columns are v.
struct MlaShape {
  int64_t qk_nope_head_dim = 128;
  int64_t qk_rope_head_dim = 64;
  int64_t v_head_dim = 128;
  int64_t kv_lora_rank = 512;
  bool absorbed = false;
};

// One attention problem of a kind ("attention", "mla": docs/kinds.md). Every kind is attention
// over the widths below (the kind derives them): scores q·k of head_dim features, scaled by
// `scale`, the softmax over them times v of head_dim_v features. Two layouts:
//  - uniform (every sequence seq_len queries and seq_len_kv keys, contiguous): q is [batch, heads,
//    seq_len, head_dim]; k is [batch, kv_heads, seq_len_kv, head_dim], v the same with head_dim_v;
//    all contiguous.
//  - packed (packed(): ragged lengths or a paged cache): q is [total_q, heads, head_dim], the
//    sequences one after another (sequence b's rows start at cu_seqlens_q[b]); k and v are
//    [total_kv, kv_heads, head_dim] likewise, or with kv_layout paged caches [pages, page_size,
//    kv_heads, head_dim] read through the page table.
//   The output is shaped like q with head_dim_v features. v_in_k (MLA's latent cache): v is a
//   view of k's first head_dim_v columns, not a tensor of its own (not contiguous).
//   kv_heads < heads is grouped-query attention: query head h reads kv head h / (heads / kv_heads).
//   A query block shorter than its keys (decode: 1 query) sits at the end of them: the mask is
//   aligned bottom-right, as in FlashAttention 2.1+ and cuDNN. Query i of a sequence with s
//   queries and s_kv keys stands at key position i + s_kv - s and sees the keys j with
//   pos - window_left <= j <= pos + window_right (-1: unbounded); causal makes window_right 0.
struct Problem {
  std::string kind = "attention";  // the problem kind; a backend runs the kinds it declares
  int64_t batch = 1;
  int64_t heads = 1;
  int64_t kv_heads = 1;  // divides heads
  int64_t seq_len = 1;     // queries per sequence; ragged: the longest sequence's
  int64_t seq_len_kv = 1;  // keys per sequence; ragged: the longest sequence's
  int64_t head_dim = 1;    // features of q and k
  DType dtype = DType::bf16;
  // The KV cache's dtype when it differs from q's: fp8_e4m3 under bf16 or fp16 queries (how
  // engines serve decode), k and v quantized with a scale each (Inputs::k_scale, v_scale), q and
  // the output in `dtype`. Unset: k and v are `dtype`.
  std::optional<DType> kv_dtype;
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
  // Attention sinks (gpt-oss): a learned logit per query head joins every row's softmax, taking
  // its share of the weight and giving no value: out = sum_j e^(s_j) v_j / (sum_j e^(s_j) + e^sink).
  bool sinks = false;
  // Chunked local attention (Llama 4's local layers): > 0, a query sees only the keys of its own
  // chunk of `chunk` positions (key j with j / chunk == pos / chunk), besides the mask and window.
  int64_t chunk = 0;
  MlaShape mla;        // kind "mla": its widths, from which it derives head_dim and head_dim_v
  double scale = 0;    // the softmax scale; 0: 1/sqrt(head_dim) (a sweep writes its kind's default)
  int64_t head_dim_v = 0;  // features of v and of the output; 0: head_dim
  bool v_in_k = false;     // v is k's first head_dim_v columns (MLA absorbed)

  int64_t group_size() const { return heads / kv_heads; }  // query heads per kv head
  int64_t v_dim() const { return head_dim_v > 0 ? head_dim_v : head_dim; }
  double softmax_scale() const {
    return scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
  }
  bool ragged() const { return !q_lens.empty() || !kv_lens.empty(); }
  bool paged() const { return kv_layout == KvLayout::paged; }
  bool packed() const { return ragged() || paged(); }
  bool windowed() const { return window_left >= 0 || (window_right >= 0 && !causal); }
  DType cache_dtype() const { return kv_dtype.value_or(dtype); }
  // k and v are fp8 while q is not (the variant "fp8_kv").
  bool fp8_kv() const { return cache_dtype() == DType::fp8_e4m3 && dtype != DType::fp8_e4m3; }
  int64_t q_len(int64_t b) const { return q_lens.empty() ? seq_len : q_lens[b]; }
  int64_t kv_len(int64_t b) const { return kv_lens.empty() ? seq_len_kv : kv_lens[b]; }
  // The window's right edge with the mask applied: 0 under causal, -1 when unbounded.
  int64_t right_edge() const { return causal ? 0 : window_right; }
  // The variants the point has beyond a uniform, contiguous batch, by name and in words, as the
  // harness's list of variants has them (docs/variants.md): filled in by the harness, what
  // Backend::variants() declares.
  struct Variant {
    std::string name;   // "sinks"
    std::string words;  // "attention sinks", for a refusal's reason
  };
  std::vector<Variant> present;
  std::vector<std::string> variant_names() const {
    std::vector<std::string> out;
    for (const Variant& v : present) out.push_back(v.name);
    return out;
  }
  // The same in words ("ragged lengths, a sliding window"); empty when none.
  std::string variants() const {
    std::string out;
    for (const Variant& v : present) out += (out.empty() ? "" : ", ") + v.words;
    return out;
  }
  // The fields of kinds and variants that have no member above (DSA's index_topk and
  // index_pattern), by name, as their sweep key wrote them (a number in its shortest form).
  std::vector<std::pair<std::string, std::string>> extra;
  const std::string* extra_text(const std::string& name) const {
    for (const auto& [key, value] : extra)
      if (key == name) return &value;
    return nullptr;
  }
  // extra's number `name`, or `fallback` when the point has none.
  double extra_number(const std::string& name, double fallback = 0) const {
    const std::string* text = extra_text(name);
    return text ? std::stod(*text) : fallback;
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
  // Uniform layout: [seq_len, seq_len_kv] bool, true = masked out (the causal mask, the window and
  // the chunk, aligned bottom-right); null when nothing is masked. Null in the packed layout.
  const at::Tensor* mask;
  double scale;  // softmax scale: problem.softmax_scale()
  // fp8_e4m3 only (1 otherwise): a value is its fp8 number times its tensor's scale (the
  // "descale" of FlashAttention-3 and cuDNN). The output is bf16, or fp8_e4m3 holding out / v_scale
  // (attention's output is a convex combination of v's rows, so that never overflows). An fp8 KV
  // cache (Problem::fp8_kv()) has k_scale and v_scale; q_scale is 1, the output q's dtype.
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
  // The inputs of the point's kind and variants beyond these, by name (docs/kinds.md and
  // docs/variants.md say what each is): "sinks" (float32 [heads], the sink logits in the units of
  // the scaled scores), DSA's "indices" (int32, each query row's top-k token positions). Read them
  // with input(name).
  const std::vector<std::pair<std::string, const at::Tensor*>>* named = nullptr;
  // The input called `name`, or null when the point has none.
  const at::Tensor* input(const std::string& name) const {
    if (named)
      for (const auto& [key, tensor] : *named)
        if (key == name) return tensor;
    return nullptr;
  }
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
  // Returns the attention output, shaped like q with head_dim_v features (uniform [batch, heads,
  // seq_len, head_dim_v], packed [total_q, heads, head_dim_v]): in q's dtype for fp16, bf16
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
  // The problem kinds it runs (Problem::kind). The harness refuses a point of any other kind
  // before supports() is asked, naming the kind: a backend never sees a kind it does not know.
  virtual std::vector<std::string> kinds() const { return {"attention"}; }
  // The variants it runs (Problem::variant_names()), refused likewise. The default,
  // kAbi4Variants, stands for every variant of plugin ABI 4 (docs/variants.md lists them), which
  // supports() refuses case by case; a later variant is refused until a backend declares it.
  virtual std::vector<std::string> variants() const { return {kAbi4Variants}; }
  static constexpr const char* kAbi4Variants = "abi4";
};

}  // namespace attnbench
