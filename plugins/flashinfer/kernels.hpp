// The FlashInfer kernels this plugin compiles, behind a plain interface: nvcc sees FlashInfer and
// CUTLASS, never LibTorch; the backend (flashinfer_backend.cpp) sees neither. Every function throws
// std::runtime_error with FlashInfer's or CUDA's message when it fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnbench::flashinfer_kernels {

// One attention problem in attnbench's layout: uniform, q, o [batch, heads, seq_len, head_dim]
// and k, v [batch, kv_heads, seq_len_kv, head_dim]; packed (qo_indptr given), q, o [total_q,
// heads, head_dim] and k, v [total_kv, kv_heads, head_dim]; contiguous bf16.
struct Shape {
  int64_t batch, heads, kv_heads, seq_len, seq_len_kv, head_dim;
  bool causal;
  float scale;
  int64_t window_left = -1;  // keys seen behind a query; -1: unbounded
  float softcap = 0;         // > 0: logits capped (FlashInfer's LogitsSoftCap variant)
  bool sinks = false;        // the served path: a sink logit per query head (run_served's sinks)
  bool fp8_cache = false;    // the served path: k and v are fp8_e4m3 (k's scale folded in scale)
  float v_scale = 1;         // the served path: v = its fp8 number times v_scale
  // Packed: host offsets of each sequence's rows (batch + 1 entries); empty: uniform.
  std::vector<int32_t> qo_indptr, kv_indptr;
  bool packed() const { return !qo_indptr.empty(); }
};

// A windowed sequence's first page a kernel needs: its q_len queries (aligned bottom-right) see no
// key before kv_len - q_len - window_left, so it is handed to FlashInfer from the page holding that
// key, as serving engines trim the page table (FlashInfer's kernels mask the window but read every
// page they are given). The masks, counted from the end, are the same over the trimmed sequence.
// window_left -1: unbounded, page 0.
inline int64_t first_page(int64_t kv_len, int64_t q_len, int64_t window_left, int64_t page_size) {
  if (window_left < 0 || kv_len - q_len <= window_left) return 0;
  return (kv_len - q_len - window_left) / page_size;
}

// Scratch the schedules live in, owned by the caller: FlashInfer plans on the host into pinned
// memory and copies the plan to the device; the float part holds split-KV partial results.
struct Workspace {
  void* int_device;
  void* int_host;  // pinned
  size_t int_bytes;
  void* float_device;
  size_t float_bytes;
};

// Whether an instance was compiled (head dim, GQA group size and variant are template parameters
// in FlashInfer; CMakeLists.txt lists the instances).
bool prefill_compiled(int64_t head_dim, bool causal, bool window, bool softcap);
bool decode_compiled(int64_t head_dim, int64_t group_size, bool window, bool softcap);

// Prefill: FlashInfer's Hopper (sm90a) kernel for a ragged batch: a packed one as it is, and
// attnbench's uniform [batch, heads, seq, dim] layout once each sequence's rows are offset by its
// batch index times its heads.
// plan_prefill() schedules the work tiles over the SMs (host, once per shape; it synchronizes
// `stream`); run_prefill() is one launch.
std::vector<int64_t> plan_prefill(const Shape& shape, const Workspace& ws, void* stream);
void run_prefill(const Shape& shape, const Workspace& ws, const std::vector<int64_t>& plan,
                 const void* q, const void* k, const void* v, void* o, void* stream);

// Decode (seq_len 1) against a paged cache: attnbench's own (NHD pages [pages, page_size,
// kv_heads, dim] named by its page table), or a uniform k, v read in place as pages (HND):
// `indices` naming each sequence's pages, as a serving engine's cache would.
struct PagedCache {
  int64_t page_size;
  bool nhd;                     // pages [page_size, kv_heads, dim]; else a uniform cache as HND
  std::vector<int32_t> indptr;  // host copy, batch + 1 entries: the pages of sequence b
  const int32_t* device_indptr;
  const int32_t* device_indices;
  const int32_t* device_last_page_len;
  const int32_t* device_qo_indptr = nullptr;  // the served path: the query rows' offsets
};
std::vector<int64_t> plan_decode(const Shape& shape, const PagedCache& cache, const Workspace& ws,
                                 void* stream);
void run_decode(const Shape& shape, const PagedCache& cache, const Workspace& ws,
                const std::vector<int64_t>& plan, const void* q, const void* k, const void* v,
                void* o, void* stream);

// The served path (served.cu): FlashInfer's batch prefill kernel over a paged cache (its FA2
// tensor-core kernel, as its paged prefill wrapper runs it for 2-8 queries a sequence and its decode
// wrapper with use_tensor_cores) with attnbench's variant: a window, sinks (a float32 logit per
// query head) and an fp8_e4m3 cache in one kernel. Query rows packed [total_q, heads, head_dim]
// (shape.qo_indptr, and cache.device_qo_indptr on the device), causal aligned bottom-right; keys
// through `cache` (a packed cache as pages of one token). PrefillPlan picks the query tile; a tile
// not compiled throws.
bool served_compiled(int64_t head_dim, bool window, bool sinks, bool fp8_cache);
std::vector<int64_t> plan_served(const Shape& shape, const PagedCache& cache, const Workspace& ws,
                                 void* stream);
void run_served(const Shape& shape, const PagedCache& cache, const Workspace& ws,
                const std::vector<int64_t>& plan, const void* q, const void* k, const void* v,
                const float* sinks, void* o, void* stream);

// MLA's absorbed decode (FlashInfer's Hopper MLA kernel, mla.cu): q [rows, heads, latent + rope]
// (the absorbed nope part first) against one latent cache of pages [pages, page_size, latent +
// rope] whose first `latent` columns are v, read through each sequence's pages; o [rows, heads,
// latent]. Row r of q starts at r * q_stride_n elements, of o at r * o_stride_n. q and o are
// bf16; the cache bf16 or fp8_e4m3.
struct MlaShape {
  int64_t batch, heads, page_size;
  int64_t latent, rope;
  bool causal;  // bottom-right, for 2+ queries a sequence
  float scale;
  bool fp8_cache;     // the cache is fp8_e4m3: a value is its number times cache_scale
  float cache_scale;  // 1 for a bf16 cache
  int64_t q_stride_n, o_stride_n;
  std::vector<int32_t> qo_indptr;    // host, batch + 1: each sequence's query rows
  std::vector<int32_t> page_indptr;  // host, batch + 1: each sequence's entries in the indices
  std::vector<int32_t> kv_len;       // host, batch: each sequence's keys
  const int32_t* device_indices;     // the pages, sequence after sequence
};
bool mla_compiled(int64_t latent, int64_t rope);
std::vector<int64_t> plan_mla(const MlaShape& shape, const Workspace& ws, void* stream);
void run_mla(const MlaShape& shape, const Workspace& ws, const std::vector<int64_t>& plan,
             const void* q, const void* cache, void* o, void* stream);

}  // namespace attnbench::flashinfer_kernels
