// FlashInfer, as serving engines run it: its Hopper (sm90a) prefill kernel for a batch of
// sequences, its decode kernel against a paged KV cache, and its batch prefill kernel over a paged
// cache with attnbench's variant (the served path: 2-8 queries a sequence, sinks, an fp8 cache),
// all with grouped-query heads. The kernels are compiled into this plugin from FlashInfer's headers
// (kernels.hpp says which); the scheduling FlashInfer does on the host (its plan) runs once per
// shape, outside the timed calls.
#include "kernels.hpp"

#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/forced_sdpa.hpp>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>

#include <optional>
#include <tuple>

namespace {

namespace fk = attnbench::flashinfer_kernels;
using attnbench::Problem;
using attnbench::Support;

// FlashInfer's own Python wrappers allocate these: 128 MiB for split-KV partial results, 8 MiB
// for the schedule.
constexpr int64_t kFloatWorkspaceBytes = int64_t{128} << 20;
constexpr int64_t kIntWorkspaceBytes = int64_t{8} << 20;
constexpr int64_t kPageSize = 16;  // tokens per page of the decode cache, as vLLM's default

bool is_decode(const Problem& p) { return p.seq_len == 1 && p.q_lens.empty(); }

constexpr const char* kDsaFeed =
    "through the MLA kernel: each query row a request over its selected tokens, pages of one "
    "token (SGLang's way on Hopper)";

// Which of the plugin's kernels runs a point: the decode kernel (CUDA cores) reads one query a
// sequence from a bf16 cache for GQA groups of up to 4; the served path (tensor cores) takes larger
// groups, as FlashInfer's decode wrapper does with use_tensor_cores (vLLM sets it above 4: on an
// H100 a group of 12 read 88-93% of the bandwidth through it, a group of 8 49-50% through the decode
// kernel), and the rest of a paged cache, sinks and fp8 caches; the Hopper prefill kernel the rest.
enum class Path { decode, served, prefill };

constexpr int64_t kLargestCudaCoreGroup = 4;

Path path_of(const Problem& p) {
  if (p.sinks || p.fp8_kv()) return Path::served;
  const bool served = fk::served_compiled(p.head_dim, p.window_left >= 0, false, false);
  if (is_decode(p) && (!p.ragged() || p.paged()) &&
      fk::decode_compiled(p.head_dim, p.group_size(), p.window_left >= 0, p.softcap > 0) &&
      (p.group_size() <= kLargestCudaCoreGroup || !served || p.softcap > 0))
    return Path::decode;
  if (p.paged() || is_decode(p)) return Path::served;
  return Path::prefill;
}

// The page ids a plan's cache lists, as positions in attnbench's [batch, width] page table (the
// plan depends on the lengths alone): gathered into the device copy of the indices before each
// call, by one index_select on the device, never read on the host.
struct PageIds {
  at::Tensor positions;  // int64 on the device; undefined: no page table
  at::Tensor into;       // the indices' slice of the cache's device copy (int32)
  void refresh(const at::Tensor& table) const {
    if (positions.defined()) {
      at::Tensor slot = into;
      at::index_select_out(slot, table.view({-1}), 0, positions);
    }
  }
};

// The current shape's schedule (FlashInfer plans into one workspace, so a new shape replaces it):
// keyed by the shape, the batch's offsets and lengths, and the page table's width.
struct Schedule {
  std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool, int64_t, float,
             std::vector<int32_t>, std::vector<int32_t>, int, bool, std::vector<int64_t>,
             int64_t>
      key;
  std::vector<int64_t> plan;
  std::optional<fk::PagedCache> cache;
  at::Tensor cache_indices;  // device copies of cache's indptr, indices and last_page_len
  // A paged cache's page ids are read from the page table at every call (an engine's table
  // changes at every step): the flat positions in the table of the entries the cache lists, and
  // where they go in cache_indices (PageIds).
  PageIds page_ids;
};

class FlashInferBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "flashinfer"; }
  std::string description() const override {
    return "FlashInfer 0.7 compiled for sm_90a, bf16: Hopper prefill of uniform and ragged "
           "batches (head_dim 64/128, causal and full; d128 window, d256 softcap with and without "
           "window) and decode over a paged cache with its page table (head_dim 64/128/256, "
           "d128 window, d256 softcap with and without window; GQA groups 1-4, 6, 8, 16); its "
           "batch prefill kernel over a paged cache with attnbench's variant for 2-8 queries a "
           "sequence, other GQA groups, attention sinks and fp8_e4m3 caches (causal; d64 sinks "
           "with and without window, d128 and d256 bf16 and fp8, d128 window); MLA's absorbed "
           "decode (latent 512, rope 64) with its Hopper MLA kernel, and DeepSeek's sparse "
           "attention through it (each query row a request over its selected tokens)";
  }
  std::vector<std::string> kinds() const override { return {"attention", "mla", "dsa"}; }
  std::vector<std::string> variants() const override {
    return {"ragged", "paged", "window", "softcap", "fp8_kv", "sinks"};
  }

  Support supports(const Problem& p) const override {
    if (auto cuda = attnbench::sdpa::needs_cuda(p, "FlashInfer"); !cuda.supported) return cuda;
    if (p.direction == attnbench::Direction::bwd)
      return Support::no("FlashInfer has no backward pass (an inference library)");
    if (p.dtype != attnbench::DType::bf16)
      return Support::no("this plugin compiles FlashInfer's kernels for bf16 only");
    if (p.kind == "mla") return mla_support(p);
    if (p.kind == "dsa") return dsa_support(p);
    switch (path_of(p)) {
      case Path::decode: return Support::yes();
      case Path::served: return served_support(p);
      case Path::prefill: break;
    }
    if (p.window_right >= 0 && !p.causal)
      return Support::no("FlashInfer's window bounds the left only (window_left); a right "
                         "bound needs causal");
    if (!fk::prefill_compiled(p.head_dim, p.causal, p.window_left >= 0, p.softcap > 0))
      return Support::no("no FlashInfer prefill kernel compiled for head_dim " +
                         std::to_string(p.head_dim) + (p.causal ? " causal" : " without a mask") +
                         (p.window_left >= 0 ? " with a window" : "") +
                         (p.softcap > 0 ? " with softcap" : "") +
                         " (ATTNBENCH_FLASHINFER_PREFILL in CMake lists the instances)");
    return Support::yes();
  }

  at::Tensor forward(const attnbench::Inputs& in) override {
    if (in.problem.kind == "mla") return mla_forward(in);
    if (in.problem.kind == "dsa") return dsa_forward(in);
    const Path path = path_of(in.problem);
    const fk::Shape s = shape(in, path);
    const Schedule& schedule = schedule_for(s, path, in);
    at::Tensor out = at::empty_like(in.q);
    void* stream = at::cuda::getCurrentCUDAStream().stream();
    if (path == Path::served)
      fk::run_served(s, *schedule.cache, workspace_, schedule.plan, in.q.data_ptr(),
                     in.k.data_ptr(), in.v.data_ptr(),
                     in.input("sinks") ? in.input("sinks")->data_ptr<float>() : nullptr, out.data_ptr(), stream);
    else if (path == Path::decode)
      fk::run_decode(s, *schedule.cache, workspace_, schedule.plan, in.q.data_ptr(),
                     in.k.data_ptr(), in.v.data_ptr(), out.data_ptr(), stream);
    else
      fk::run_prefill(s, workspace_, schedule.plan, in.q.data_ptr(), in.k.data_ptr(),
                      in.v.data_ptr(), out.data_ptr(), stream);
    return out;
  }

 private:
  static Support served_support(const Problem& p) {
    const std::string what = "FlashInfer's batch prefill over a paged cache (the path this plugin "
                             "runs sinks, fp8 caches, 2+ queries a sequence and GQA groups its "
                             "decode kernel lacks)";
    if (p.softcap > 0) return Support::no(what + " is compiled here without softcap");
    if (p.window_right > 0)
      return Support::no(what + " takes a window's left bound only (window_left)");
    if (!p.causal && !is_decode(p))
      return Support::no(what + " is compiled here with the causal mask only (a single query "
                                "sees every key either way)");
    if (!p.packed() && !is_decode(p))
      return Support::no(what + " takes packed query rows: 2+ queries a sequence come with "
                                "ragged lengths (seq_lens) or a paged cache here");
    if (!fk::served_compiled(p.head_dim, p.window_left >= 0, p.sinks, p.fp8_kv()))
      return Support::no(
          "no FlashInfer batch prefill kernel compiled for head_dim " +
          std::to_string(p.head_dim) + (p.window_left >= 0 ? " with a window" : "") +
          (p.sinks ? " with sinks" : "") + (p.fp8_kv() ? " over an fp8_e4m3 cache" : "") +
          (is_decode(p) && !p.sinks && !p.fp8_kv()
               ? " (nor a decode kernel for GQA groups of " + std::to_string(p.group_size()) + ")"
               : "") +
          " (ATTNBENCH_FLASHINFER_SERVED in CMake lists the instances)");
    return Support::yes();
  }

  static Support mla_support(const Problem& p) {
    if (!p.mla.absorbed)
      return Support::no("this plugin compiles FlashInfer's MLA decode (absorbed: true); its "
                         "prefill instances take q·k and v of one width, not MLA's 192 / 128");
    if (!fk::mla_compiled(p.mla.kv_lora_rank, p.mla.qk_rope_head_dim))
      return Support::no("FlashInfer's MLA kernel is compiled here for a latent rank of 512 and "
                         "rope 64, not " + std::to_string(p.mla.kv_lora_rank) + " and " +
                         std::to_string(p.mla.qk_rope_head_dim));
    if (!p.packed() && p.seq_len > 1)
      return Support::no("FlashInfer's MLA kernel takes packed query rows: 2+ queries a sequence "
                         "come with a paged cache or ragged lengths here");
    return Support::yes();
  }

  static Support dsa_support(const Problem& p) {
    if (!fk::mla_compiled(p.mla.kv_lora_rank, p.mla.qk_rope_head_dim))
      return Support::no("FlashInfer's MLA kernel is compiled here for a latent rank of 512 and "
                         "rope 64, not " + std::to_string(p.mla.kv_lora_rank) + " and " +
                         std::to_string(p.mla.qk_rope_head_dim));
    if (!p.packed() && p.seq_len > 1)
      return Support::no("FlashInfer's MLA kernel takes packed query rows: 2+ queries a sequence "
                         "come with a paged cache or ragged lengths here");
    return Support::fed(kDsaFeed);
  }

  // DeepSeek's sparse attention through the MLA kernel, as SGLang runs it on Hopper: each query
  // row a request of its own whose pages, of one token each, are its selected tokens' slots in
  // the cache. The plan depends on each row's count of selected tokens (the shape's, not the
  // indices'); each call turns the indices into slots on the device (through the page table or
  // the offsets), inside the timed call as an engine pays it.
  at::Tensor dsa_forward(const attnbench::Inputs& in) {
    const Problem& p = in.problem;
    const at::Tensor& indices = *in.input("indices");
    const int64_t topk = indices.size(-1), width = p.head_dim, latent = p.mla.kv_lora_rank;
    const auto key = std::make_tuple(p.batch, p.heads, p.seq_len, p.seq_len_kv, p.causal,
                                     p.q_lens, p.kv_lens, p.page_size, int(p.kv_layout), topk);
    if (!dsa_ || dsa_->key != key) {
      ensure_workspace();
      schedule_.reset(), mla_.reset(), dsa_.reset();  // one workspace: a new plan overwrites
      DsaSchedule next{key, {}, {}, {}, {}, {}, {}};
      fk::MlaShape& s = next.shape;
      std::vector<int64_t> entries, sequence;  // each selected entry: its place in the indices
      s.qo_indptr = {0}, s.page_indptr = {0};
      int64_t row = 0;
      for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t i = 0; i < p.q_len(b); ++i, ++row) {
          const int64_t count = std::min(topk, p.kv_len(b) - p.q_len(b) + i + 1);
          for (int64_t j = 0; j < count; ++j) entries.push_back(row * topk + j), sequence.push_back(b);
          s.qo_indptr.push_back(static_cast<int32_t>(row + 1));
          s.kv_len.push_back(static_cast<int32_t>(count));
          s.page_indptr.push_back(s.page_indptr.back() + static_cast<int32_t>(count));
        }
      s.batch = row, s.heads = p.heads, s.latent = latent, s.rope = p.mla.qk_rope_head_dim;
      s.causal = false, s.page_size = 1;
      s.q_stride_n = p.heads * width, s.o_stride_n = p.heads * latent;
      const auto longs = at::TensorOptions().dtype(at::kLong);
      next.entries = at::tensor(entries, longs).to(at::kCUDA);
      const at::Tensor seqs = at::tensor(sequence, longs).to(at::kCUDA);
      // Where sequence b's token t lives: page_table[b][t / page] * page + t % page, or its
      // offset plus t (packed), or b * seq_len_kv + t (uniform).
      if (p.paged())
        next.table_rows = seqs * in.page_table->size(1);
      else if (p.packed())
        next.offsets = in.cu_seqlens_kv->to(at::kLong).index_select(0, seqs);
      else
        next.offsets = seqs * p.seq_len_kv;
      next.slots = at::empty({static_cast<int64_t>(entries.size())}, at::TensorOptions().dtype(at::kInt).device(at::kCUDA));
      s.device_indices = next.slots.data_ptr<int32_t>();
      next.plan = fk::plan_mla(s, workspace_, at::cuda::getCurrentCUDAStream().stream());
      dsa_ = std::move(next);
    }
    DsaSchedule& d = *dsa_;
    const at::Tensor t = indices.view({-1}).index_select(0, d.entries).to(at::kLong);
    at::Tensor slots;
    if (p.paged()) {
      const at::Tensor page = in.page_table->view({-1}).index_select(0, d.table_rows + t.div(p.page_size, "floor"));
      slots = page.to(at::kLong) * p.page_size + t.remainder(p.page_size);
    } else {
      slots = d.offsets + t;
    }
    d.slots.copy_(slots);
    fk::MlaShape& s = d.shape;
    s.scale = static_cast<float>(in.scale);
    s.fp8_cache = p.fp8_kv(), s.cache_scale = static_cast<float>(in.k_scale);
    std::vector<int64_t> sizes = in.q.sizes().vec();
    sizes.back() = latent;
    at::Tensor out = at::empty(sizes, in.q.options());
    fk::run_mla(s, workspace_, d.plan, in.q.data_ptr(), in.k.data_ptr(), out.data_ptr(),
                at::cuda::getCurrentCUDAStream().stream());
    return out;
  }

  // MLA's absorbed decode. The cache as FlashInfer's pages in every layout: a paged one through
  // its page table, a packed one as pages of one token, a uniform one as one page a sequence.
  at::Tensor mla_forward(const attnbench::Inputs& in) {
    const Problem& p = in.problem;
    const int64_t width = p.head_dim, latent = p.mla.kv_lora_rank;
    const auto key = std::make_tuple(p.batch, p.heads, p.seq_len, p.seq_len_kv, p.causal,
                                     p.q_lens, p.kv_lens, p.page_size, int(p.kv_layout));
    if (!mla_ || mla_->key != key) {
      ensure_workspace();
      schedule_.reset(), mla_.reset(), dsa_.reset();  // one workspace: a new plan overwrites the last
      MlaSchedule next{key, {}, {}, {}, {}};
      fk::MlaShape& s = next.shape;
      s.batch = p.batch, s.heads = p.heads, s.latent = latent, s.rope = p.mla.qk_rope_head_dim;
      s.causal = p.causal && (p.seq_len > 1 || !p.q_lens.empty());
      s.q_stride_n = p.heads * width, s.o_stride_n = p.heads * latent;
      std::vector<int32_t> indices;
      std::vector<int64_t> positions;  // paged: where each index is in the table
      s.qo_indptr = {0}, s.page_indptr = {0};
      const int64_t width = in.page_table ? in.page_table->size(1) : 0;
      for (int64_t b = 0; b < p.batch; ++b) {
        s.qo_indptr.push_back(s.qo_indptr.back() + static_cast<int32_t>(p.q_len(b)));
        s.kv_len.push_back(static_cast<int32_t>(p.kv_len(b)));
        if (p.paged()) {
          for (int64_t i = 0; i < (p.kv_len(b) + p.page_size - 1) / p.page_size; ++i)
            positions.push_back(b * width + i), indices.push_back(0);
        } else if (p.packed()) {  // pages of one token: the sequence's rows
          const int32_t start = s.page_indptr.back();
          for (int32_t t = 0; t < p.kv_len(b); ++t) indices.push_back(start + t);
        } else {  // one page of seq_len_kv tokens a sequence
          indices.push_back(static_cast<int32_t>(b));
        }
        s.page_indptr.push_back(static_cast<int32_t>(indices.size()));
      }
      s.page_size = p.paged() ? p.page_size : p.packed() ? 1 : p.seq_len_kv;
      next.indices = at::tensor(indices, at::kInt).to(at::kCUDA);
      s.device_indices = next.indices.data_ptr<int32_t>();
      if (p.paged())
        next.page_ids = {at::tensor(positions, at::kLong).to(at::kCUDA), next.indices};
      if (p.paged()) next.page_ids.refresh(*in.page_table);  // planned on counts, not the ids
      next.plan = fk::plan_mla(s, workspace_, at::cuda::getCurrentCUDAStream().stream());
      mla_ = std::move(next);
    }
    mla_->page_ids.refresh(in.page_table ? *in.page_table : at::Tensor());
    // What the plan does not read is the call's own: two points of one shape and lengths may
    // differ in their scale or their cache's dtype.
    fk::MlaShape& s = mla_->shape;
    s.scale = static_cast<float>(in.scale);
    s.fp8_cache = p.fp8_kv(), s.cache_scale = static_cast<float>(in.k_scale);
    std::vector<int64_t> sizes = in.q.sizes().vec();
    sizes.back() = latent;
    at::Tensor out = at::empty(sizes, in.q.options());
    fk::run_mla(mla_->shape, workspace_, mla_->plan, in.q.data_ptr(), in.k.data_ptr(),
                out.data_ptr(), at::cuda::getCurrentCUDAStream().stream());
    return out;
  }

  static fk::Shape shape(const attnbench::Inputs& in, Path path) {
    const Problem& p = in.problem;
    fk::Shape s{p.batch, p.heads, p.kv_heads, p.seq_len, p.seq_len_kv, p.head_dim,
                p.causal && p.seq_len > 1, static_cast<float>(in.scale)};
    s.window_left = p.window_left;
    s.softcap = static_cast<float>(p.softcap);
    if (path == Path::served) {  // packed query rows (one a sequence in the uniform layout)
      s.sinks = p.sinks, s.fp8_cache = p.fp8_kv();
      s.scale = static_cast<float>(in.scale * in.k_scale);  // q·(k_fp8 k_scale) = (q·k_fp8) k_scale
      s.v_scale = static_cast<float>(in.v_scale);
      s.qo_indptr = {0};
      for (int64_t b = 0; b < p.batch; ++b)
        s.qo_indptr.push_back(s.qo_indptr.back() + static_cast<int32_t>(p.q_len(b)));
      return s;
    }
    if (p.ragged() && !p.paged()) {  // the offsets, from the problem's lengths (host)
      s.qo_indptr = {0}, s.kv_indptr = {0};
      for (int64_t b = 0; b < p.batch; ++b) {
        s.qo_indptr.push_back(s.qo_indptr.back() + static_cast<int32_t>(p.q_len(b)));
        s.kv_indptr.push_back(s.kv_indptr.back() + static_cast<int32_t>(p.kv_len(b)));
      }
    }
    return s;
  }

  const Schedule& schedule_for(const fk::Shape& s, Path path, const attnbench::Inputs& in) {
    const Problem& p = in.problem;
    const auto key = std::make_tuple(
        s.batch, s.heads, s.kv_heads, s.seq_len, s.seq_len_kv, s.head_dim, s.causal,
        s.window_left, s.softcap, s.qo_indptr, s.kv_indptr, int(path), p.fp8_kv(), p.kv_lens,
        in.page_table ? in.page_table->size(1) : int64_t{0});
    if (schedule_ && schedule_->key == key) {
      if (in.page_table) schedule_->page_ids.refresh(*in.page_table);
      return *schedule_;
    }
    const cudaDeviceProp* gpu = at::cuda::getCurrentDeviceProperties();
    if (gpu->major != 9)
      throw attnbench::Unsupported(
          "FlashInfer's kernels are compiled here for sm_90a (Hopper); "
          "this GPU is sm_" +
          std::to_string(gpu->major * 10 + gpu->minor));
    ensure_workspace();
    schedule_.reset(), mla_.reset(), dsa_.reset();  // their plans are about to be overwritten
    Schedule next{key, {}, std::nullopt, {}, {}};
    void* stream = at::cuda::getCurrentCUDAStream().stream();
    if (path == Path::served) {
      next.cache = in.page_table ? table_cache(in, next.cache_indices, next.page_ids, s.qo_indptr)
                   : in.problem.packed() ? token_cache(in, next.cache_indices, s.qo_indptr)
                                         : paged_cache(s, next.cache_indices, s.qo_indptr);
      next.plan = fk::plan_served(s, *next.cache, workspace_, stream);
    } else if (path == Path::decode) {
      next.cache = in.page_table ? table_cache(in, next.cache_indices, next.page_ids)
                                 : paged_cache(s, next.cache_indices);
      next.plan = fk::plan_decode(s, *next.cache, workspace_, stream);
    } else {
      next.plan = fk::plan_prefill(s, workspace_, stream);
    }
    schedule_ = std::move(next);
    return *schedule_;
  }

  // A cache's page lists on the device, in one tensor (`device` keeps it): indptr, then the
  // indices, then each sequence's last page length, then the query rows' offsets (the served
  // path's; empty for the decode kernel).
  static fk::PagedCache uploaded(int64_t page_size, bool nhd, std::vector<int32_t> indptr,
                                 const std::vector<int32_t>& indices,
                                 const std::vector<int32_t>& last, at::Tensor& device,
                                 const std::vector<int32_t>& qo_indptr = {}) {
    std::vector<int32_t> all = indptr;
    all.insert(all.end(), indices.begin(), indices.end());
    all.insert(all.end(), last.begin(), last.end());
    all.insert(all.end(), qo_indptr.begin(), qo_indptr.end());
    device = at::tensor(all, at::kInt).to(at::kCUDA);
    const int32_t* base = device.data_ptr<int32_t>();
    const size_t pages_at = indptr.size(), last_at = pages_at + indices.size();
    fk::PagedCache cache{page_size, nhd, std::move(indptr), base, base + pages_at,
                         base + last_at};
    if (!qo_indptr.empty()) cache.device_qo_indptr = base + last_at + last.size();
    return cache;
  }

  // The harness's k, v [batch, kv_heads, seq_len_kv, dim] read in place as pages: page p of
  // sequence b is page number b * kv_heads * seq_len_kv / page_size + p (pages of one token
  // where 16 does not divide kv_heads * seq_len_kv).
  static fk::PagedCache paged_cache(const fk::Shape& s, at::Tensor& device,
                                    const std::vector<int32_t>& qo_indptr = {}) {
    const int64_t page = (s.kv_heads * s.seq_len_kv) % kPageSize == 0 ? kPageSize : 1;
    const int64_t pages = (s.seq_len_kv + page - 1) / page;
    const int64_t first = fk::first_page(s.seq_len_kv, s.seq_len, s.window_left, page);
    std::vector<int32_t> indptr(s.batch + 1), indices, last(s.batch);
    for (int64_t b = 0; b < s.batch; ++b) {
      indptr[b + 1] = static_cast<int32_t>((b + 1) * (pages - first));
      for (int64_t p = first; p < pages; ++p)
        indices.push_back(static_cast<int32_t>(b * s.kv_heads * s.seq_len_kv / page + p));
      last[b] = static_cast<int32_t>(s.seq_len_kv - (pages - 1) * page);
    }
    return uploaded(page, /*nhd=*/false, std::move(indptr), indices, last, device, qo_indptr);
  }

  // A packed [total_kv, kv_heads, dim] cache as pages of one token (as SGLang hands FlashInfer
  // its cache): sequence b's pages are its rows, from the first its window sees.
  static fk::PagedCache token_cache(const attnbench::Inputs& in, at::Tensor& device,
                                    const std::vector<int32_t>& qo_indptr) {
    const Problem& p = in.problem;
    std::vector<int32_t> indptr{0}, indices, last(p.batch, 1);
    int64_t start = 0;
    for (int64_t b = 0; b < p.batch; ++b) {
      for (int64_t t = fk::first_page(p.kv_len(b), p.q_len(b), p.window_left, 1); t < p.kv_len(b); ++t)
        indices.push_back(static_cast<int32_t>(start + t));
      indptr.push_back(static_cast<int32_t>(indices.size()));
      start += p.kv_len(b);
    }
    return uploaded(1, /*nhd=*/true, std::move(indptr), indices, last, device, qo_indptr);
  }

  // attnbench's paged cache as FlashInfer's: sequence b's pages are the first ceil(kv_len /
  // page_size) entries of its page-table row, in the table's order, from the first its window
  // sees; which entries is planned here, their ids are gathered from the table at every call
  // (`ids`, refreshed here for the first).
  static fk::PagedCache table_cache(const attnbench::Inputs& in, at::Tensor& device, PageIds& ids,
                                    const std::vector<int32_t>& qo_indptr = {}) {
    const Problem& p = in.problem;
    const int64_t width = in.page_table->size(1);
    std::vector<int32_t> indptr{0}, indices, last(p.batch);
    std::vector<int64_t> positions;
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t pages = (p.kv_len(b) + p.page_size - 1) / p.page_size;
      for (int64_t i = fk::first_page(p.kv_len(b), p.q_len(b), p.window_left, p.page_size); i < pages;
           ++i)
        positions.push_back(b * width + i), indices.push_back(0);
      indptr.push_back(static_cast<int32_t>(indices.size()));
      last[b] = static_cast<int32_t>(p.kv_len(b) - (pages - 1) * p.page_size);
    }
    const int64_t count = static_cast<int64_t>(indices.size());
    const int64_t first = static_cast<int64_t>(indptr.size());  // the indices follow indptr
    fk::PagedCache cache = uploaded(p.page_size, /*nhd=*/true, std::move(indptr), indices, last,
                                    device, qo_indptr);
    ids = {at::tensor(positions, at::kLong).to(device.device()), device.narrow(0, first, count)};
    ids.refresh(*in.page_table);
    return cache;
  }

  void ensure_workspace() {
    if (int_device_.defined()) return;
    const auto bytes = at::TensorOptions().dtype(at::kByte);
    int_device_ = at::empty({kIntWorkspaceBytes}, bytes.device(at::kCUDA));
    int_host_ = at::empty({kIntWorkspaceBytes}, bytes.pinned_memory(true));
    float_device_ = at::empty({kFloatWorkspaceBytes}, bytes.device(at::kCUDA));
    workspace_ = {int_device_.data_ptr(), int_host_.data_ptr(), size_t(kIntWorkspaceBytes),
                  float_device_.data_ptr(), size_t(kFloatWorkspaceBytes)};
  }

  // MLA's schedule, keyed by the shape, the lengths and the page table it read (held, as
  // Schedule's), with the page indices it uploaded.
  struct MlaSchedule {
    std::tuple<int64_t, int64_t, int64_t, int64_t, bool, std::vector<int64_t>,
               std::vector<int64_t>, int64_t, int>
        key;
    fk::MlaShape shape;
    std::vector<int64_t> plan;
    at::Tensor indices;
    PageIds page_ids;  // a paged cache's: into `indices` before each call
  };

  // DSA's: the plan, each selected entry's place in the flat indices and its sequence's page-table
  // row or cache offset, and the slots buffer the kernel reads (refilled each call).
  struct DsaSchedule {
    std::tuple<int64_t, int64_t, int64_t, int64_t, bool, std::vector<int64_t>,
               std::vector<int64_t>, int64_t, int, int64_t>
        key;
    fk::MlaShape shape;
    std::vector<int64_t> plan;
    at::Tensor entries, table_rows, offsets, slots;
  };

  at::Tensor int_device_, int_host_, float_device_;
  fk::Workspace workspace_{};
  std::optional<Schedule> schedule_;
  std::optional<MlaSchedule> mla_;
  std::optional<DsaSchedule> dsa_;
};

}  // namespace

ATTNBENCH_PLUGIN(FlashInferBackend)
