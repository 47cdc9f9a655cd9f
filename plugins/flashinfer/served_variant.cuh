// attnbench's own variant on FlashInfer's batch prefill kernel: what served attention of 2026 adds
// to a softmax, in one kernel. FlashInfer's default variant has windows and softcap; gpt-oss's
// sinks and an fp8 cache's value scale are hooks FlashInfer's templates leave to a variant
// (variant_helper.cuh: a mask, an update of the running max and sum, an output transform).
#pragma once

// variant_helper.cuh names flashinfer::math without including it.
#include <flashinfer/math.cuh>
//
#include <flashinfer/attention/variant_helper.cuh>

#include <cstdint>

namespace attnbench::flashinfer_kernels {

template <bool kWindow, bool kSinks>
struct ServedAttention : flashinfer::AttentionVariantBase {
  static constexpr bool use_softmax = true;
  uint32_t qo_len, kv_len, window_left;
  float sm_scale_log2;  // read by the kernel: logits are kept in base 2

  template <typename Params>
  __device__ __host__ ServedAttention(const Params& params, uint32_t batch_idx, uint8_t*) {
    qo_len = params.get_qo_len(batch_idx);
    kv_len = params.get_kv_len(batch_idx);
    window_left = params.window_left >= 0 ? params.window_left : kv_len;
    sm_scale_log2 = params.sm_scale * flashinfer::math::log2e;
  }

  // The window, aligned bottom-right as the causal mask is (query i of qo_len sits at key
  // kv_len - qo_len + i and sees window_left keys behind it).
  REGISTER_LOGITS_MASK(params, batch_idx, qo_idx, kv_idx, qo_head_idx, kv_head_idx, {
    if constexpr (kWindow) return kv_idx + qo_len + window_left >= kv_len + qo_idx;
    return true;
  })

  // A sink is one more logit in the row's softmax with no value behind it: it joins the running
  // max m and sum d (base 2) once, in the state of the first KV chunk, so that a row split over
  // chunks counts it once when FlashInfer merges their states. `scale` rescales the output to
  // the new max.
  REGISTER_M_D_UPDATE(params, kv_tile_idx, qo_head_idx, m, d, scale, {
    scale = 1.f;
    if constexpr (kSinks) {
      namespace math = flashinfer::math;
      const float sink = kv_tile_idx == 0 && qo_head_idx < params.num_qo_heads
                             ? params.sinks[qo_head_idx] * math::log2e
                             : -math::inf;
      const float m_new = m > sink ? float(m) : sink;
      // fmaxf drops the NaN of (-inf) - (-inf) in a row that saw no key and no sink.
      scale = math::ptx_exp2(fmaxf(m - m_new, -math::inf));
      d = math::ptx_exp2(fmaxf(sink - m_new, -math::inf)) + d * scale;
      m = m_new;
    }
  })

  // The softmax's division, and an fp8 cache's value scale (1 for bf16): v = v_fp8 * v_scale
  // is linear in the output. (k's scale is folded into sm_scale by the caller.)
  REGISTER_OUTPUT_TRANSFORM(params, output, batch_idx, qo_idx, qo_head_idx, m, d, scale, {
    const float d_rcp = m != -flashinfer::math::inf ? flashinfer::math::ptx_rcp(d) : 0.f;
    return output * scale * d_rcp * params.v_scale;
  })
};

}  // namespace attnbench::flashinfer_kernels
