// SDPA through cuDNN's frontend graph API directly, without PyTorch's SDPA wrapper: how much of
// `cudnn`'s host time per call is cuDNN and how much is the wrapper. The frontend (header-only,
// from the nvidia-cudnn-frontend wheel) loads cuDNN dynamically: the libcudnn.so.9 that PyTorch
// already loaded. One graph and execution plan per shape, built at the shape's first call (outside
// every timed call); a call is one execute(), its workspace taken from PyTorch's caching allocator
// as PyTorch's own cuDNN attention does (a workspace kept per plan held 2 GiB after a sweep's
// backward points on the H100, the sum over its shapes).
#include <attnbench/plugin.hpp>
#include <attnbench/sdpa/forced_sdpa.hpp>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>

#include <cudnn_frontend.h>

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace cudnn_frontend {
void* cudnn_dlhandle = nullptr;  // the frontend's dynamic loading reads cuDNN's symbols from here
}

namespace {

namespace fe = cudnn_frontend;
using attnbench::Problem;
using attnbench::Support;

enum Uid : int64_t {
  kQ = 1,
  kK,
  kV,
  kO,
  kStats,
  kDO,
  kDQ,
  kDK,
  kDV,
  // fp8: the scales (device scalars) and the amax outputs
  kDescaleQ,
  kDescaleK,
  kDescaleV,
  kDescaleS,
  kScaleS,
  kScaleO,
  kAmaxS,
  kAmaxO,
  // ragged: the offsets and lengths
  kQOffsets,
  kKvOffsets,
  kQLens,
  kKvLens,
  kVOffsets,
  kOOffsets,
  // paged: the page table (one for K and V)
  kPageTableK,
  kPageTableV,
  kSink  // attention sinks: float32 [1, heads, 1, 1]
};

// fp8: the softmax probabilities P (in [0, 1]) go to fp8 for the P x V product scaled by this,
// the largest e4m3 number, and back.
constexpr float kFp8Max = 448.f;

void check(fe::error_t status, const char* what) {
  if (!status.is_good())
    throw attnbench::Unsupported(std::string("cuDNN frontend: ") + what + ": " +
                                 status.get_message());
}

// The harness's layout: [batch, heads, seq, dim], contiguous.
std::shared_ptr<fe::graph::Tensor_attributes> bhsd(fe::graph::Graph& g, const char* name,
                                                   int64_t uid, const at::Tensor& t) {
  std::vector<int64_t> dims(t.sizes().begin(), t.sizes().end());
  std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  return g.tensor(
      fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(dims).set_stride(strides));
}

fe::DataType_t io_type(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kBFloat16: return fe::DataType_t::BFLOAT16;
    case at::kFloat8_e4m3fn: return fe::DataType_t::FP8_E4M3;
    default: return fe::DataType_t::HALF;
  }
}

std::shared_ptr<fe::graph::Tensor_attributes> scalar(fe::graph::Graph& g, const char* name,
                                                     int64_t uid) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim({1, 1, 1, 1})
                      .set_stride({1, 1, 1, 1})
                      .set_data_type(fe::DataType_t::FLOAT));
}

struct Plan {
  std::shared_ptr<fe::graph::Graph> graph;
  int64_t workspace_bytes = 0;
  // A ragged batch: each tensor's element offset per sequence and the lengths, int32 on the
  // device [batch + 1 or batch, 1, 1, 1], made with the plan (outside the timed calls).
  at::Tensor q_offsets, kv_offsets, v_offsets, o_offsets, q_lens, kv_lens;
  // fp8: the six scales (descale q, k, v, s; scale s, o) and the two amax outputs, float32 on the
  // device, filled when the plan is made (outside the timed calls) for the scales it was made for.
  at::Tensor fp8_scalars;
  std::tuple<double, double, double> fp8_scales;
};

// A plan per (shape, dtype, mask, direction), built once.
// Shapes of q, k, then dtype, causal, stats, the window's left edge, the ragged lengths, the page
// table's shape (empty: not paged), v's shape and strides (MLA: another width, or a view of k),
// and whether a sink joins the softmax.
using ShapeKey = std::tuple<std::vector<int64_t>, std::vector<int64_t>, int, bool, bool, int64_t,
                            std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>,
                            std::vector<int64_t>, bool>;

// v's shape and strides, for a plan's key.
std::vector<int64_t> v_layout(const at::Tensor& v) {
  std::vector<int64_t> out = v.sizes().vec();
  for (int64_t s : v.strides()) out.push_back(s);
  return out;
}

// The output: q's shape with v's width (MLA's 128 or 512).
at::Tensor empty_output(const attnbench::Inputs& in, at::ScalarType dtype) {
  std::vector<int64_t> sizes = in.q.sizes().vec();
  sizes.back() = in.v.size(-1);
  return at::empty(sizes, in.q.options().dtype(dtype));
}

class CudnnFe {
 public:
  CudnnFe() {
    // PyTorch's CUDA build has cuDNN loaded already; RTLD_NOLOAD finds that copy.
    fe::cudnn_dlhandle = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_NOLOAD);
    if (!fe::cudnn_dlhandle) fe::cudnn_dlhandle = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_GLOBAL);
    if (!fe::cudnn_dlhandle)
      throw attnbench::Unsupported("cuDNN (libcudnn.so.9) is not loaded and cannot be found");
    if (fe::detail::create_handle(&handle_) != CUDNN_STATUS_SUCCESS)
      throw attnbench::Unsupported("cudnnCreate failed");
  }
  cudnnHandle_t handle() const { return handle_; }

 private:
  cudnnHandle_t handle_ = nullptr;
};

class CudnnFeBackend final : public attnbench::Backend {
 public:
  std::string name() const override { return "cudnn-fe"; }
  std::string description() const override {
    return "cuDNN SDPA through the frontend graph API (no PyTorch SDPA), forward and backward, "
           "causal bottom-right, GQA, ragged offsets, paged K/V and its sliding window, sinks, "
           "MLA; one "
           "plan per shape built outside the timed calls";
  }
  // MLA: prefill is SDPA with v narrower than q·k; the absorbed decode a graph whose V is the
  // first kv_lora_rank columns of K's cache (strides, no copy). cuDNN decides what it runs.
  std::vector<std::string> kinds() const override { return {"attention", "mla"}; }
  std::vector<std::string> variants() const override {
    return {"ragged", "paged", "window", "softcap", "sinks"};
  }
  Support supports(const Problem& p) const override {
    if (auto cuda = attnbench::sdpa::needs_cuda(p, "cuDNN's fused attention"); !cuda.supported)
      return cuda;
    if (p.dtype == attnbench::DType::f32)
      return Support::no("cuDNN's fused attention takes fp16 and bf16, not fp32");
    // The absorbed MLA decode (576 / 512) is past this bound: cuDNN's own check answers for it.
    if (!p.v_in_k && (p.head_dim > 256 || p.head_dim % 8 != 0))
      return Support::no("cuDNN's fused attention needs head_dim <= 256 and a multiple of 8, not " +
                         std::to_string(p.head_dim));
    if (p.v_in_k && p.dtype == attnbench::DType::fp8_e4m3)
      return Support::no("this plugin runs the absorbed MLA decode in fp16 and bf16");
    if (p.softcap > 0) return Support::no("cuDNN's SDPA graph has no softcap");
    if (p.sinks && p.dtype == attnbench::DType::fp8_e4m3)
      return Support::no("this plugin gives cuDNN's sink token to its fp16 and bf16 graph only");
    if (p.right_edge() > 0)
      return Support::no(
          "this plugin gives cuDNN's band a right bound of 0 (causal, or a decode's window) "
          "only, not " + std::to_string(p.right_edge()));
    if ((p.packed() || p.windowed()) &&
        (p.dtype == attnbench::DType::fp8_e4m3 || p.direction == attnbench::Direction::bwd))
      return Support::no(
          "this plugin runs ragged batches, paged caches and windows forward, in fp16 and bf16");
    if (p.dtype == attnbench::DType::fp8_e4m3) {
      if (p.direction == attnbench::Direction::bwd)
        return Support::no("this plugin runs cuDNN's fp8 attention forward only");
      if (p.head_dim % 16 != 0)
        return Support::no("cuDNN's fp8 attention needs head_dim a multiple of 16");
      if (p.causal && p.seq_len != p.seq_len_kv)
        return Support::no(
            "cuDNN's fp8 attention aligns a causal mask bottom-right only on "
            "Blackwell (frontend 1.32: sdpa_support_surface.h); on Hopper it is "
            "top-left, which is the same only when seq_len == seq_len_kv");
    }
    return Support::yes();
  }

  at::Tensor forward(const attnbench::Inputs& in) override {
    const bool fp8 = in.q.scalar_type() == at::kFloat8_e4m3fn;
    const Plan& plan = fp8 ? fp8_forward_plan(in) : forward_plan(in, /*stats=*/false);
    // fp8: out / v_scale (scale_o), as backend.hpp allows
    at::Tensor out = empty_output(in, in.q.scalar_type());
    std::unordered_map<int64_t, void*> pack = {
        {kQ, in.q.data_ptr()}, {kK, in.k.data_ptr()}, {kV, in.v.data_ptr()}, {kO, out.data_ptr()}};
    for (auto [uid, t] : {std::pair{kQOffsets, &plan.q_offsets},
                          {kKvOffsets, &plan.kv_offsets},
                          {kVOffsets, &plan.v_offsets},
                          {kOOffsets, &plan.o_offsets},
                          {kQLens, &plan.q_lens},
                          {kKvLens, &plan.kv_lens}})
      if (t->defined()) pack[uid] = t->data_ptr();
    if (in.page_table)
      pack.insert(
          {{kPageTableK, in.page_table->data_ptr()}, {kPageTableV, in.page_table->data_ptr()}});
    if (const at::Tensor* sinks = in.input("sinks")) pack[kSink] = sinks->data_ptr();
    if (fp8) {
      auto* s = static_cast<float*>(plan.fp8_scalars.data_ptr());
      const int64_t uids[] = {kDescaleQ, kDescaleK, kDescaleV, kDescaleS,
                              kScaleS,   kScaleO,   kAmaxS,    kAmaxO};
      for (int i = 0; i < 8; ++i) pack[uids[i]] = s + i;
    }
    execute(plan, pack);
    return out;
  }

  // fp8_e4m3 forward (q, k, v and the output in fp8; Hopper's cuDNN has no bf16 output for it):
  // one plan per shape and scales, the scales on the device beside it.
  const Plan& fp8_forward_plan(const attnbench::Inputs& in) {
    const auto scales = std::make_tuple(in.q_scale, in.k_scale, in.v_scale);
    const ShapeKey key{in.q.sizes().vec(),
                       in.k.sizes().vec(),
                       int(in.q.scalar_type()),
                       in.problem.causal,
                       false,
                       -1,
                       {},
                       {},
                       {},
                       v_layout(in.v),
                       in.input("sinks") != nullptr};
    const std::lock_guard<std::mutex> lock(mutex_);
    auto it = forward_plans_.find(key);
    if (it != forward_plans_.end() && it->second.fp8_scales == scales) return it->second;
    if (it != forward_plans_.end()) forward_plans_.erase(it);
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(fe::DataType_t::FP8_E4M3)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    auto q = bhsd(*g, "q", kQ, in.q), k = bhsd(*g, "k", kK, in.k), v = bhsd(*g, "v", kV, in.v);
    auto options = fe::graph::SDPA_fp8_attributes()
                       .set_name("sdpa_fp8")
                       .set_generate_stats(false)
                       .set_attn_scale(static_cast<float>(in.scale));
    if (in.problem.causal) options.set_causal_mask(true);  // top-left: supports() keeps it square
    auto [o, stats, amax_s, amax_o] =
        g->sdpa_fp8(q, k, v, scalar(*g, "descale_q", kDescaleQ), scalar(*g, "descale_k", kDescaleK),
                    scalar(*g, "descale_v", kDescaleV), scalar(*g, "descale_s", kDescaleS),
                    scalar(*g, "scale_s", kScaleS), scalar(*g, "scale_o", kScaleO), options);
    (void)stats;
    const at::Tensor out = empty_output(in, in.q.scalar_type());
    o->set_output(true).set_uid(kO).set_dim(out.sizes().vec()).set_stride(out.strides().vec());
    for (auto& [amax, uid] : {std::pair{amax_s, kAmaxS}, std::pair{amax_o, kAmaxO}})
      amax->set_output(true)
          .set_uid(uid)
          .set_dim({1, 1, 1, 1})
          .set_stride({1, 1, 1, 1})
          .set_data_type(fe::DataType_t::FLOAT);
    Plan plan = build(g);
    const std::vector<float> values = {float(in.q_scale),
                                       float(in.k_scale),
                                       float(in.v_scale),
                                       1.f / kFp8Max,
                                       kFp8Max,
                                       float(1 / in.v_scale),
                                       0.f,
                                       0.f};
    plan.fp8_scalars = at::tensor(values, at::kFloat).to(in.q.device());
    plan.fp8_scales = scales;
    return forward_plans_.emplace(key, std::move(plan)).first->second;
  }

  std::unique_ptr<attnbench::BackwardPass> prepare_backward(const attnbench::Inputs& in) override;

  // Builds (once) and returns the plan of this shape; `stats` also writes the softmax statistics
  // the backward pass needs.
  const Plan& forward_plan(const attnbench::Inputs& in, bool stats) {
    const attnbench::Problem& p = in.problem;
    const ShapeKey key{in.q.sizes().vec(),
                       in.k.sizes().vec(),
                       int(in.q.scalar_type()),
                       p.causal,
                       stats,
                       p.window_left,
                       p.q_lens,
                       p.kv_lens,
                       in.page_table ? in.page_table->sizes().vec() : std::vector<int64_t>{},
                       v_layout(in.v),
                       in.input("sinks") != nullptr};
    const std::lock_guard<std::mutex> lock(mutex_);
    auto it = forward_plans_.find(key);
    if (it != forward_plans_.end()) return it->second;
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(io_type(in.q))
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    auto options =
        fe::graph::SDPA_attributes().set_name("sdpa").set_generate_stats(stats).set_attn_scale(
            static_cast<float>(in.scale));
    // cuDNN's band, measured from the diagonal through the last query and the last key
    // (attnbench's; cuDNN's default is the top-left one, which puts a decode query at key 0): a
    // query sees left_bound keys up to and including its own position, and none ahead of it with
    // a right bound of 0 (causal, or a window [LEFT, 0]).
    if (p.causal || p.right_edge() == 0) options.set_causal_mask_bottom_right(true);
    if (p.window_left >= 0)
      options.set_diagonal_band_left_bound(static_cast<int>(p.window_left + 1))
          .set_diagonal_alignment(fe::DiagonalAlignment_t::BOTTOM_RIGHT);
    if (in.input("sinks"))  // gpt-oss's sinks: cuDNN's sink_token, a logit per head (cuDNN 9.13+)
      options.set_sink_token(g->tensor(fe::graph::Tensor_attributes()
                                           .set_name("sink")
                                           .set_uid(kSink)
                                           .set_dim({1, p.heads, 1, 1})
                                           .set_stride({p.heads, 1, 1, 1})
                                           .set_data_type(fe::DataType_t::FLOAT)));
    Plan plan;
    if (!p.packed()) {
      auto q = bhsd(*g, "q", kQ, in.q), k = bhsd(*g, "k", kK, in.k), v = bhsd(*g, "v", kV, in.v);
      auto [o, st] = g->sdpa(q, k, v, options);
      const at::Tensor out = empty_output(in, in.q.scalar_type());
      o->set_output(true).set_uid(kO).set_dim(out.sizes().vec()).set_stride(out.strides().vec());
      if (stats) st->set_output(true).set_uid(kStats).set_data_type(fe::DataType_t::FLOAT);
      plan = build(g);
    } else {
      plan = packed_plan(g, options, in);
    }
    return forward_plans_.emplace(key, std::move(plan)).first->second;
  }

  // The packed layout: the rows [total, heads, dim] as [batch, heads, longest, dim] with a ragged
  // offset per sequence (in elements) where lengths differ, and the padding mask of the real
  // lengths. A paged cache is cuDNN's container [pages, kv_heads, page_size, dim] (attnbench's
  // pages [pages, page_size, kv_heads, dim] through strides) read through the page table.
  Plan packed_plan(const std::shared_ptr<fe::graph::Graph>& g, fe::graph::SDPA_attributes& options,
                   const attnbench::Inputs& in) {
    const Problem& p = in.problem;
    const int64_t dv = p.v_dim();
    // Each tensor's offset per sequence, in elements: its rows times its token stride (v's is
    // k's when v is a view of k's columns, MLA's latent cache).
    std::vector<int32_t> q_off{0}, kv_off{0}, v_off{0}, o_off{0}, q_len, kv_len;
    for (int64_t b = 0; b < p.batch; ++b) {
      q_len.push_back(static_cast<int32_t>(p.q_len(b)));
      kv_len.push_back(static_cast<int32_t>(p.kv_len(b)));
      q_off.push_back(q_off.back() + static_cast<int32_t>(p.q_len(b) * in.q.stride(0)));
      o_off.push_back(o_off.back() + static_cast<int32_t>(p.q_len(b) * p.heads * dv));
      kv_off.push_back(kv_off.back() + static_cast<int32_t>(p.kv_len(b) * in.k.stride(0)));
      v_off.push_back(v_off.back() + static_cast<int32_t>(p.kv_len(b) * in.v.stride(0)));
    }
    auto column = [&](const char* name, int64_t uid, std::vector<int64_t> dim) {
      std::vector<int64_t> stride(dim.size(), 1);
      for (size_t i = dim.size() - 1; i-- > 0;) stride[i] = stride[i + 1] * dim[i + 1];
      return g->tensor(fe::graph::Tensor_attributes()
                           .set_name(name)
                           .set_uid(uid)
                           .set_dim(dim)
                           .set_stride(stride)
                           .set_data_type(fe::DataType_t::INT32));
    };
    // Packed rows [total, heads, width] (token stride `token`, head stride `head`) as [batch,
    // heads, longest, width].
    auto rows = [&](const char* name, int64_t uid, int64_t heads, int64_t longest, int64_t width,
                    int64_t token, int64_t head) {
      return g->tensor(fe::graph::Tensor_attributes()
                           .set_name(name)
                           .set_uid(uid)
                           .set_dim({p.batch, heads, longest, width})
                           .set_stride({longest * token, head, token, 1}));
    };
    // Uniform query lengths (decode: one each) need no offsets: sequence b's rows start at b.
    const bool ragged_q = !p.q_lens.empty();
    auto q_ro = ragged_q ? column("q_offsets", kQOffsets, {p.batch + 1, 1, 1, 1}) : nullptr;
    auto o_ro = ragged_q ? column("o_offsets", kOOffsets, {p.batch + 1, 1, 1, 1}) : nullptr;
    auto q = rows("q", kQ, p.heads, p.seq_len, p.head_dim, in.q.stride(0), in.q.stride(1));
    if (ragged_q) q->set_ragged_offset(q_ro);
    std::shared_ptr<fe::graph::Tensor_attributes> k, v;
    if (p.paged()) {
      // attnbench's pages [pages, page_size, kv_heads, width] as cuDNN's container [pages,
      // kv_heads, page_size, width], through each tensor's own strides.
      const int64_t pages = in.k.size(0), page_size = p.page_size;
      auto container = [&](const char* name, int64_t uid, const at::Tensor& t) {
        return g->tensor(fe::graph::Tensor_attributes()
                             .set_name(name)
                             .set_uid(uid)
                             .set_dim({pages, p.kv_heads, page_size, t.size(3)})
                             .set_stride({t.stride(0), t.stride(2), t.stride(1), 1}));
      };
      k = container("k", kK, in.k), v = container("v", kV, in.v);
      const int64_t width = in.page_table->size(1);
      options
          .set_paged_attention_k_table(column("page_table_k", kPageTableK, {p.batch, 1, width, 1}))
          .set_paged_attention_v_table(column("page_table_v", kPageTableV, {p.batch, 1, width, 1}))
          .set_paged_attention_max_seq_len_kv(static_cast<int>(p.seq_len_kv));
    } else {
      auto kv_ro = column("kv_offsets", kKvOffsets, {p.batch + 1, 1, 1, 1});
      auto v_ro = column("v_offsets", kVOffsets, {p.batch + 1, 1, 1, 1});
      k = rows("k", kK, p.kv_heads, p.seq_len_kv, p.head_dim, in.k.stride(0), in.k.stride(1));
      v = rows("v", kV, p.kv_heads, p.seq_len_kv, dv, in.v.stride(0), in.v.stride(1));
      k->set_ragged_offset(kv_ro), v->set_ragged_offset(v_ro);
    }
    options.set_padding_mask(true)
        .set_seq_len_q(column("q_lens", kQLens, {p.batch, 1, 1, 1}))
        .set_seq_len_kv(column("kv_lens", kKvLens, {p.batch, 1, 1, 1}));
    auto [o, st] = g->sdpa(q, k, v, options);
    o->set_output(true)
        .set_uid(kO)
        .set_dim({p.batch, p.heads, p.seq_len, dv})
        .set_stride({p.seq_len * p.heads * dv, dv, p.heads * dv, 1});
    if (ragged_q) o->set_ragged_offset(o_ro);
    Plan plan = build(g);
    auto device = [&](const std::vector<int32_t>& values) {
      return at::tensor(values, at::kInt).to(in.q.device());
    };
    if (ragged_q) plan.q_offsets = device(q_off), plan.o_offsets = device(o_off);
    if (!p.paged()) plan.kv_offsets = device(kv_off), plan.v_offsets = device(v_off);
    plan.q_lens = device(q_len), plan.kv_lens = device(kv_len);
    return plan;
  }

  Plan build(const std::shared_ptr<fe::graph::Graph>& g) {
    check(g->validate(), "validate");
    check(g->build_operation_graph(cudnn().handle()), "build_operation_graph");
    check(g->create_execution_plans({fe::HeurMode_t::A}), "create_execution_plans");
    check(g->check_support(), "check_support");
    check(g->build_plans(), "build_plans");
    int64_t bytes = 0;
    check(g->get_workspace_size(bytes), "get_workspace_size");
    return {g, std::max<int64_t>(bytes, 1)};
  }

  void execute(const Plan& plan, std::unordered_map<int64_t, void*>& pack) {
    cudnnHandle_t h = cudnn().handle();
    fe::detail::set_stream(h, at::cuda::getCurrentCUDAStream().stream());
    const at::Tensor workspace =
        at::empty({plan.workspace_bytes}, at::dtype(at::kByte).device(at::kCUDA));
    fe::error_t status = plan.graph->execute(h, pack, workspace.data_ptr());
    if (!status.is_good())
      throw std::runtime_error("cuDNN frontend: execute: " + status.get_message());
  }

  std::mutex mutex_;
  std::map<ShapeKey, Plan> forward_plans_;
  std::map<ShapeKey, Plan> backward_plans_;

 private:
  CudnnFe& cudnn() {
    if (!cudnn_) cudnn_ = std::make_unique<CudnnFe>();
    return *cudnn_;
  }
  std::unique_ptr<CudnnFe> cudnn_;
};

// The forward ran once (here, untimed) and saved its output and softmax statistics; run() is one
// execute of the backward graph.
class CudnnFeBackward final : public attnbench::BackwardPass {
 public:
  CudnnFeBackward(CudnnFeBackend& backend, const attnbench::Inputs& in)
      : backend_(backend), q_(in.q), k_(in.k), v_(in.v) {
    const Plan& fwd = backend.forward_plan(in, /*stats=*/true);
    out_ = empty_output(in, in.q.scalar_type());
    stats_ =
        at::empty({in.q.size(0), in.q.size(1), in.q.size(2), 1}, in.q.options().dtype(at::kFloat));
    std::unordered_map<int64_t, void*> pack = {{kQ, q_.data_ptr()},
                                               {kK, k_.data_ptr()},
                                               {kV, v_.data_ptr()},
                                               {kO, out_.data_ptr()},
                                               {kStats, stats_.data_ptr()}};
    backend.execute(fwd, pack);
    plan_ = &backward_plan(in);
  }

  void run(const at::Tensor& grad_out, at::Tensor& dq, at::Tensor& dk, at::Tensor& dv) override {
    dq = at::empty_like(q_), dk = at::empty_like(k_), dv = at::empty_like(v_);
    std::unordered_map<int64_t, void*> pack = {
        {kQ, q_.data_ptr()},   {kK, k_.data_ptr()},         {kV, v_.data_ptr()},
        {kO, out_.data_ptr()}, {kStats, stats_.data_ptr()}, {kDO, grad_out.data_ptr()},
        {kDQ, dq.data_ptr()},  {kDK, dk.data_ptr()},        {kDV, dv.data_ptr()}};
    backend_.execute(*plan_, pack);
  }

 private:
  const Plan& backward_plan(const attnbench::Inputs& in) {
    const ShapeKey key{in.q.sizes().vec(),
                       in.k.sizes().vec(),
                       int(in.q.scalar_type()),
                       in.problem.causal,
                       true,
                       -1,
                       {},
                       {},
                       {},
                       v_layout(in.v),
                       in.input("sinks") != nullptr};
    {
      const std::lock_guard<std::mutex> lock(backend_.mutex_);
      auto it = backend_.backward_plans_.find(key);
      if (it != backend_.backward_plans_.end()) return it->second;
    }
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(io_type(in.q))
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    auto q = bhsd(*g, "q", kQ, q_), k = bhsd(*g, "k", kK, k_), v = bhsd(*g, "v", kV, v_);
    auto o = bhsd(*g, "o", kO, out_), d_o = bhsd(*g, "dO", kDO, out_);
    auto stats = g->tensor(fe::graph::Tensor_attributes()
                               .set_name("stats")
                               .set_uid(kStats)
                               .set_dim(stats_.sizes().vec())
                               .set_stride(stats_.strides().vec())
                               .set_data_type(fe::DataType_t::FLOAT));
    auto options = fe::graph::SDPA_backward_attributes()
                       .set_name("sdpa_backward")
                       .set_attn_scale(static_cast<float>(in.scale));
    // Square, the two alignments are one mask; cuDNN's top-left one skips the masked tiles in
    // the backward (bottom-right ran causal 2k-32k at 239-289 TFLOP/s on the H200, about the full
    // mask's work, where PyTorch's cudnn and the published table read 364-583).
    if (in.problem.causal && in.problem.seq_len == in.problem.seq_len_kv)
      options.set_causal_mask(true);
    else if (in.problem.causal)
      options.set_causal_mask_bottom_right(true);
    auto [dq, dk, dv] = g->sdpa_backward(q, k, v, o, d_o, stats, options);
    dq->set_output(true).set_uid(kDQ).set_dim(q_.sizes().vec()).set_stride(q_.strides().vec());
    dk->set_output(true).set_uid(kDK).set_dim(k_.sizes().vec()).set_stride(k_.strides().vec());
    dv->set_output(true).set_uid(kDV).set_dim(v_.sizes().vec()).set_stride(v_.strides().vec());
    Plan plan = backend_.build(g);
    const std::lock_guard<std::mutex> lock(backend_.mutex_);
    return backend_.backward_plans_.emplace(key, std::move(plan)).first->second;
  }

  CudnnFeBackend& backend_;
  at::Tensor q_, k_, v_, out_, stats_;
  const Plan* plan_ = nullptr;
};

std::unique_ptr<attnbench::BackwardPass> CudnnFeBackend::prepare_backward(
    const attnbench::Inputs& in) {
  return std::make_unique<CudnnFeBackward>(*this, in);
}

}  // namespace

ATTNBENCH_PLUGIN(CudnnFeBackend)
