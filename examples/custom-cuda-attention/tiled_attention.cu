// Attention forward, written by hand: tiles of 64 queries x 64 keys in shared memory, both
// matrix products on tensor cores through WMMA (16x16x16, fp32 accumulation), and the online
// softmax of FlashAttention (running max and sum per row; no seq_q x seq_kv buffer anywhere).
//
// One block of 8 warps takes 128 query rows of one (batch, head); each warp owns 16 rows and keeps
// their Q fragments in registers. Key and value tiles are double-buffered: the next tile is copied
// (cp.async) while the current one is used. Per key tile: S = Q K^T (WMMA, staged to shared memory
// as fp32), the softmax update of the warp's rows (two lanes per row), P (bf16/fp16) to shared
// memory, O = alpha * O + P V (WMMA). O stays in accumulator fragments; to rescale its rows, a
// fragment loaded from a table of row numbers tells which row each of a thread's fragment elements
// belongs to (fragments of one type share a layout).
#include "tiled_attention.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <mma.h>

#include <stdexcept>
#include <string>

namespace wmma_attention {

namespace {

using namespace nvcuda;

constexpr int kWarps = 8;
constexpr int kRowsPerWarp = 16;
constexpr int kBlockM = kWarps * kRowsPerWarp;  // query rows per block
constexpr int kBlockN = 64;                     // keys per tile
constexpr int kPad = 8;            // 16 bytes of padding per row against bank conflicts
constexpr int kSld = kBlockN + 4;  // fp32 scores' row stride

struct Dims {
  int heads, group, seq_q, seq_kv;
  bool causal;
  float scale_log2;  // softmax scale times log2(e): exp2 instead of exp
};

template <typename T>
__device__ T from_float(float x);
template <>
__device__ __nv_bfloat16 from_float(float x) {
  return __float2bfloat16(x);
}
template <>
__device__ __half from_float(float x) {
  return __float2half(x);
}

// rows x D of T from global (row stride D) to shared (row stride D + kPad), 16 bytes at a time;
// rows at or past `valid` are zero.
template <typename T, int D>
__device__ void load_tile(T* dst, const T* src, int rows, int valid) {
  constexpr int kVecs = D * sizeof(T) / 16;  // 16-byte vectors per row
  for (int i = threadIdx.x; i < rows * kVecs; i += blockDim.x) {
    const int r = i / kVecs, c = i % kVecs;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (r < valid) v = reinterpret_cast<const uint4*>(src + static_cast<int64_t>(r) * D)[c];
    reinterpret_cast<uint4*>(dst + r * (D + kPad))[c] = v;
  }
}

// The same, asynchronous (cp.async) for the key and value tiles: the caller commits and waits.
template <typename T, int D>
__device__ void start_tile_copy(T* dst, const T* src, int rows, int valid) {
  constexpr int kVecs = D * sizeof(T) / 16;
  for (int i = threadIdx.x; i < rows * kVecs; i += blockDim.x) {
    const int r = i / kVecs, c = i % kVecs;
    uint4* to = reinterpret_cast<uint4*>(dst + r * (D + kPad)) + c;
    if (r < valid)
      __pipeline_memcpy_async(
          to, reinterpret_cast<const uint4*>(src + static_cast<int64_t>(r) * D) + c, 16);
    else
      *to = make_uint4(0, 0, 0, 0);
  }
}

template <typename T, int D>
__global__ void __launch_bounds__(kWarps * 32, D == 64 ? 2 : 1)
    forward_kernel(const T* __restrict__ q, const T* __restrict__ k, const T* __restrict__ v,
                   T* __restrict__ out, Dims dims) {
  constexpr int kLd = D + kPad;
  extern __shared__ __align__(128) unsigned char smem[];  // WMMA wants 32-byte aligned tiles
  T* qs = reinterpret_cast<T*>(smem);
  T* ks = qs + kBlockM * kLd;                                       // two buffers of kBlockN rows
  T* vs = ks + 2 * kBlockN * kLd;                                   // two buffers of kBlockN rows
  float* ss = reinterpret_cast<float*>(vs + 2 * kBlockN * kLd);     // per warp 16 x kSld
  T* ps = reinterpret_cast<T*>(ss + kWarps * kRowsPerWarp * kSld);  // per warp 16 x (64 + kPad)
  float* row_max = reinterpret_cast<float*>(ps + kWarps * kRowsPerWarp * (kBlockN + kPad));
  float* row_sum = row_max + kBlockM;
  float* row_alpha = row_sum + kBlockM;
  float* row_table = row_alpha + kBlockM;  // 16 x 16: element (r, c) = r

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int bh = blockIdx.y, b = bh / dims.heads, h = bh % dims.heads;
  const int kvh = h / dims.group, kv_heads = dims.heads / dims.group;
  const int m0 = blockIdx.x * kBlockM;
  const int offset = dims.seq_kv - dims.seq_q;  // bottom-right alignment of the causal mask
  const T* q_bh = q + (static_cast<int64_t>(bh) * dims.seq_q + m0) * D;
  const T* k_bh = k + static_cast<int64_t>(b * kv_heads + kvh) * dims.seq_kv * D;
  const T* v_bh = v + static_cast<int64_t>(b * kv_heads + kvh) * dims.seq_kv * D;

  load_tile<T, D>(qs, q_bh, kBlockM, dims.seq_q - m0);
  for (int i = threadIdx.x; i < 256; i += blockDim.x) row_table[i] = static_cast<float>(i / 16);
  for (int i = threadIdx.x; i < kBlockM; i += blockDim.x) {
    row_max[i] = -INFINITY;
    row_sum[i] = 0.f;
  }
  __syncthreads();

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[D / 16], rows;
  wmma::load_matrix_sync(rows, row_table, 16, wmma::mem_row_major);
  for (auto& f : acc) wmma::fill_fragment(f, 0.f);
  wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> q_frag[D / 16];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
    wmma::load_matrix_sync(q_frag[kk], qs + warp * kRowsPerWarp * kLd + kk * 16, kLd);

  float* s_w = ss + warp * kRowsPerWarp * kSld;
  T* p_w = ps + warp * kRowsPerWarp * (kBlockN + kPad);
  const int my_row = lane / 2, half = lane % 2;  // two lanes per row, 32 columns each
  const int query = m0 + warp * kRowsPerWarp + my_row;
  float* stats_w = row_max + warp * kRowsPerWarp;

  // Keys past the last one any row of this block sees are never loaded.
  const int n_end = dims.causal ? min(dims.seq_kv, m0 + kBlockM + offset) : dims.seq_kv;
  auto start_kv_copy = [&](int n0, int buffer) {
    start_tile_copy<T, D>(ks + buffer * kBlockN * kLd, k_bh + static_cast<int64_t>(n0) * D, kBlockN,
                          dims.seq_kv - n0);
    start_tile_copy<T, D>(vs + buffer * kBlockN * kLd, v_bh + static_cast<int64_t>(n0) * D, kBlockN,
                          dims.seq_kv - n0);
  };
  if (n_end > 0) start_kv_copy(0, 0);
  __pipeline_commit();
  int buffer = 0;
  for (int n0 = 0; n0 < n_end; n0 += kBlockN, buffer ^= 1) {
    // The next tile's copy starts into the other buffer, which every warp finished with at the
    // end of the previous iteration; then this tile's copy must be complete.
    if (n0 + kBlockN < n_end) start_kv_copy(n0 + kBlockN, buffer ^ 1);
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    const T* kt = ks + buffer * kBlockN * kLd;
    const T* vt = vs + buffer * kBlockN * kLd;

// S = Q K^T for the warp's 16 rows and the tile's 64 keys.
#pragma unroll
    for (int j = 0; j < kBlockN / 16; ++j) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> s;
      wmma::fill_fragment(s, 0.f);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> bk;
        wmma::load_matrix_sync(bk, kt + j * 16 * kLd + kk * 16, kLd);
        wmma::mma_sync(s, q_frag[kk], bk, s);
      }
      wmma::store_matrix_sync(s_w + j * 16, s, kSld, wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax of row my_row over this tile: masked and out-of-range keys are -inf.
    float x[32];
    float tile_max = -INFINITY;
#pragma unroll
    for (int c = 0; c < 32; ++c) {
      const int col = half * 32 + c, key = n0 + col;
      const bool seen = key < dims.seq_kv && (!dims.causal || key <= query + offset);
      x[c] = seen ? s_w[my_row * kSld + col] * dims.scale_log2 : -INFINITY;
      tile_max = fmaxf(tile_max, x[c]);
    }
    tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 1));
    const float old_max = stats_w[my_row];
    const float new_max = fmaxf(old_max, tile_max);
    // A row that has seen no key yet keeps max -inf: its p are 0, nothing to rescale.
    const float base = new_max == -INFINITY ? 0.f : new_max;
    const float alpha = old_max == -INFINITY ? 0.f : exp2f(old_max - base);
    float sum = 0.f;
#pragma unroll
    for (int c = 0; c < 32; ++c) {
      const float p = exp2f(x[c] - base);  // exp2(-inf) = 0
      sum += p;
      p_w[my_row * (kBlockN + kPad) + half * 32 + c] = from_float<T>(p);
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    __syncwarp();
    if (half == 0) {
      stats_w[my_row] = new_max;
      row_sum[warp * kRowsPerWarp + my_row] = row_sum[warp * kRowsPerWarp + my_row] * alpha + sum;
      row_alpha[warp * kRowsPerWarp + my_row] = alpha;
    }
    __syncwarp();

    // O = alpha * O + P V.
    const float* alpha_w = row_alpha + warp * kRowsPerWarp;
#pragma unroll
    for (auto& f : acc)
      for (int i = 0; i < f.num_elements; ++i) f.x[i] *= alpha_w[static_cast<int>(rows.x[i])];
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
      wmma::load_matrix_sync(a, p_w + kk * 16, kBlockN + kPad);
#pragma unroll
      for (int t = 0; t < D / 16; ++t) {
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> bv;
        wmma::load_matrix_sync(bv, vt + kk * 16 * kLd + t * 16, kLd);
        wmma::mma_sync(acc[t], a, bv, acc[t]);
      }
    }
    __syncthreads();  // every warp is done with this buffer before the next copy into it
  }

  // O / sum, through the warp's fp32 staging area four 16-column tiles at a time.
  const float* sum_w = row_sum + warp * kRowsPerWarp;
#pragma unroll
  for (auto& f : acc)
    for (int i = 0; i < f.num_elements; ++i) {
      const float l = sum_w[static_cast<int>(rows.x[i])];
      f.x[i] = l > 0.f ? f.x[i] / l : 0.f;
    }
  T* out_w = out + (static_cast<int64_t>(bh) * dims.seq_q + m0 + warp * kRowsPerWarp) * D;
  const int rows_left = dims.seq_q - (m0 + warp * kRowsPerWarp);
#pragma unroll
  for (int t0 = 0; t0 < D / 16; t0 += 4) {
    __syncwarp();
#pragma unroll
    for (int t = t0; t < t0 + 4 && t < D / 16; ++t)
      wmma::store_matrix_sync(s_w + (t - t0) * 16, acc[t], kSld, wmma::mem_row_major);
    __syncwarp();
    for (int i = lane; i < kRowsPerWarp * 64; i += 32) {
      const int r = i / 64, c = i % 64;
      if (r < rows_left && t0 * 16 + c < D)
        out_w[static_cast<int64_t>(r) * D + t0 * 16 + c] = from_float<T>(s_w[r * kSld + c]);
    }
  }
}

template <typename T, int D>
void launch(const Args& a, cudaStream_t stream) {
  constexpr size_t kLd = D + kPad;
  constexpr size_t smem =
      (kBlockM + 4 * kBlockN) * kLd * sizeof(T) + kWarps * kRowsPerWarp * kSld * sizeof(float) +
      kWarps * kRowsPerWarp * (kBlockN + kPad) * sizeof(T) + (3 * kBlockM + 256) * sizeof(float);
  auto kernel = forward_kernel<T, D>;
  // More than the default 48 KiB of shared memory: allowed once per kernel, not on every call.
  static const cudaError_t opt_in =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  if (opt_in != cudaSuccess)
    throw std::runtime_error(std::string("cudaFuncSetAttribute: ") + cudaGetErrorString(opt_in));
  cudaError_t err;
  const Dims dims{static_cast<int>(a.heads),
                  static_cast<int>(a.heads / a.kv_heads),
                  static_cast<int>(a.seq_q),
                  static_cast<int>(a.seq_kv),
                  a.causal,
                  a.scale * 1.4426950408889634f};
  const dim3 grid(static_cast<unsigned>((a.seq_q + kBlockM - 1) / kBlockM),
                  static_cast<unsigned>(a.batch * a.heads));
  kernel<<<grid, kWarps * 32, smem, stream>>>(
      static_cast<const T*>(a.q), static_cast<const T*>(a.k), static_cast<const T*>(a.v),
      static_cast<T*>(a.out), dims);
  err = cudaGetLastError();
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("kernel launch: ") + cudaGetErrorString(err));
}

}  // namespace

void launch_forward(const Args& a, cudaStream_t stream) {
  if (a.head_dim == 64)
    a.bf16 ? launch<__nv_bfloat16, 64>(a, stream) : launch<__half, 64>(a, stream);
  else if (a.head_dim == 128)
    a.bf16 ? launch<__nv_bfloat16, 128>(a, stream) : launch<__half, 128>(a, stream);
  else
    throw std::runtime_error("head_dim " + std::to_string(a.head_dim) +
                             " (the kernel has 64 and 128)");
}

}  // namespace wmma_attention
