// Prefill: FlashInfer's scheduler for a ragged batch (PrefillSM90Plan) and the dispatch to the
// compiled kernel instances.
#include "check.cuh"
#include "kernels.hpp"
#include "prefill.cuh"

#include <flashinfer/attention/scheduler.cuh>

#include <stdexcept>
#include <string>

namespace attnbench::flashinfer_kernels {
// The instances CMakeLists.txt generated, as ATTNBENCH_FLASHINFER_PREFILL(head_dim, causal, window,
// softcap) lines.
#define ATTNBENCH_FLASHINFER_PREFILL_INSTANCES "flashinfer_prefill_instances.inc"

namespace {
constexpr int64_t instance(int64_t head_dim, bool causal, bool window, bool softcap) {
  return head_dim * 8 + (causal ? 4 : 0) + (window ? 2 : 0) + (softcap ? 1 : 0);
}
}  // namespace

bool prefill_compiled(int64_t head_dim, bool causal, bool window, bool softcap) {
  switch (instance(head_dim, causal, window, softcap)) {
#define ATTNBENCH_FLASHINFER_PREFILL(D, C, W, S) \
  case instance(D, C, W, S):                     \
    return true;
#include ATTNBENCH_FLASHINFER_PREFILL_INSTANCES
#undef ATTNBENCH_FLASHINFER_PREFILL
    default: return false;
  }
}

std::vector<int64_t> plan_prefill(const Shape& s, const Workspace& ws, void* stream_ptr) {
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  // FlashInfer's ragged batch: sequence b's rows start at row qo_indptr[b] of a [rows, heads, dim]
  // tensor. A packed batch is that already; a uniform one is planned as the packed batch
  // (b * seq_len), then rebased below.
  std::vector<int32_t> qo_indptr = s.qo_indptr, kv_indptr = s.kv_indptr, kv_len(s.batch);
  if (!s.packed()) {
    qo_indptr.resize(s.batch + 1), kv_indptr.resize(s.batch + 1);
    for (int64_t b = 0; b <= s.batch; ++b) {
      qo_indptr[b] = static_cast<int32_t>(b * s.seq_len);
      kv_indptr[b] = static_cast<int32_t>(b * s.seq_len_kv);
    }
  }
  for (int64_t b = 0; b < s.batch; ++b) kv_len[b] = kv_indptr[b + 1] - kv_indptr[b];
  flashinfer::PrefillPlanSM90Info info;
  check(flashinfer::PrefillSM90Plan(ws.float_device, ws.float_bytes, ws.int_device, ws.int_host,
                                    ws.int_bytes, info, qo_indptr.data(), kv_indptr.data(),
                                    kv_len.data(), qo_indptr.back(), s.batch, s.heads,
                                    s.kv_heads, s.head_dim, s.head_dim, /*page_size=*/1, s.causal,
                                    /*enable_cuda_graph=*/false, /*sizeof_dtype_o=*/2, stream),
        "PrefillSM90Plan");
  if (info.same_schedule_for_all_heads)
    throw std::runtime_error(
        "FlashInfer schedules this batch with one schedule for all heads (over 4096 tiles per "
        "head), a kernel instance this plugin does not compile");
  if (s.packed()) {
    check(cudaStreamSynchronize(stream), "plan copy");
    return info.ToVector();
  }
  // attnbench's q is [batch, heads, seq, dim]: with the row stride head_dim and the head stride
  // seq_len * head_dim, sequence b starts at row b * heads * seq_len. Rebase the plan's row
  // offsets (b * seq_len) to that, and the cache's likewise.
  check(cudaStreamSynchronize(stream), "plan copy");
  int device = 0, sm_count = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device), "SM count");
  const int32_t works =
      flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_host, info.work_indptr_offset)[sm_count];
  auto rebase = [&](int64_t offset, int64_t heads) {
    int32_t* host = flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_host, offset);
    for (int32_t i = 0; i < works; ++i) host[i] = static_cast<int32_t>(host[i] * heads);
    check(cudaMemcpyAsync(flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_device, offset), host,
                          works * sizeof(int32_t), cudaMemcpyHostToDevice, stream),
          "plan copy");
  };
  rebase(info.qo_indptr_offset, s.heads);
  rebase(info.kv_indptr_offset, s.kv_heads);
  check(cudaStreamSynchronize(stream), "plan copy");
  return info.ToVector();
}

void run_prefill(const Shape& s, const Workspace& ws, const std::vector<int64_t>& plan,
                 const void* q, const void* k, const void* v, void* o, void* stream_ptr) {
  flashinfer::PrefillPlanSM90Info info;
  info.FromVector(plan);
  using T = cutlass::bfloat16_t;
  PrefillParams p{};
  p.q_ptr = static_cast<T*>(const_cast<void*>(q));
  p.k_ptr = static_cast<T*>(const_cast<void*>(k));
  p.v_ptr = static_cast<T*>(const_cast<void*>(v));
  p.o_ptr = static_cast<T*>(o);
  p.lse_ptr = nullptr;
  p.qo_tile_indices =
      flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_device, info.qo_tile_indices_offset);
  p.qo_indptr = flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_device, info.qo_indptr_offset);
  p.kv_indptr = flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_device, info.kv_indptr_offset);
  p.qo_lens = flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_device, info.qo_len_offset);
  p.kv_lens = flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_device, info.kv_len_offset);
  p.head_indices =
      flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_device, info.head_indices_offset);
  p.work_indptr = flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_device, info.work_indptr_offset);
  p.batch_indices =
      flashinfer::GetPtrFromBaseOffset<int32_t>(ws.int_device, info.batch_indices_offset);
  p.additional_params.logits_soft_cap = s.softcap;
  p.additional_params.sm_scale = s.scale;
  p.additional_params.maybe_prefix_len_ptr = nullptr;
  p.additional_params.maybe_token_pos_in_items_ptr = nullptr;
  p.additional_params.token_pos_in_items_len = 0;
  p.additional_params.maybe_max_item_len_ptr = nullptr;
  if (s.packed()) {  // [rows, heads, dim]
    p.q_stride_n = p.o_stride_n = s.heads * s.head_dim;
    p.q_stride_h = p.o_stride_h = s.head_dim;
    p.k_stride_n = p.v_stride_n = s.kv_heads * s.head_dim;
    p.k_stride_h = p.v_stride_h = s.head_dim;
    p.nnz_qo = s.qo_indptr.back();
    p.nnz_kv = s.kv_indptr.back();
  } else {
    p.q_stride_n = p.o_stride_n = s.head_dim;
    p.q_stride_h = p.o_stride_h = s.seq_len * s.head_dim;
    p.k_stride_n = p.v_stride_n = s.head_dim;
    p.k_stride_h = p.v_stride_h = s.seq_len_kv * s.head_dim;
    // Rows the tensor maps may address: up to the last sequence's last row of its first head.
    p.nnz_qo = (s.batch - 1) * s.heads * s.seq_len + s.seq_len;
    p.nnz_kv = (s.batch - 1) * s.kv_heads * s.seq_len_kv + s.seq_len_kv;
  }
  p.num_qo_heads = static_cast<int>(s.heads);
  p.num_kv_heads = static_cast<int>(s.kv_heads);
  p.group_size = static_cast<int>(s.heads / s.kv_heads);
  p.window_left = static_cast<int>(s.window_left);
  p.causal = s.causal;
  auto stream = static_cast<cudaStream_t>(stream_ptr);
  cudaError_t status = cudaErrorNotSupported;
  switch (instance(s.head_dim, s.causal, s.window_left >= 0, s.softcap > 0)) {
#define ATTNBENCH_FLASHINFER_PREFILL(D, C, W, S)    \
  case instance(D, C, W, S):                        \
    status = launch_prefill<D, C, W, S>(p, stream); \
    break;
#include ATTNBENCH_FLASHINFER_PREFILL_INSTANCES
#undef ATTNBENCH_FLASHINFER_PREFILL
    default:
      throw std::runtime_error("FlashInfer prefill: no kernel compiled for head_dim " +
                               std::to_string(s.head_dim) + (s.causal ? ", causal" : "") +
                               (s.window_left >= 0 ? ", window" : "") +
                               (s.softcap > 0 ? ", softcap" : ""));
  }
  check(status, "prefill");
}

}  // namespace attnbench::flashinfer_kernels
