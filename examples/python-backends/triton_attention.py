"""A fused attention forward in Triton, written for attnbench: one program per block of queries
of one head, the keys streamed through an online softmax (FlashAttention's scheme), nothing
materialized in HBM. Bottom-right causal mask (a query block against a longer cache) and
grouped-query heads, like attnbench's problems. attnbench checks it against float64 at every point it measures.
"""
import torch
import triton
import triton.language as tl

_CONFIGS = [
    triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_stages=s, num_warps=w)
    for m, n, s, w in [(128, 64, 3, 8), (128, 128, 2, 8), (128, 32, 4, 4), (64, 64, 3, 4),
                       (64, 32, 4, 4)]
]


@triton.autotune(configs=_CONFIGS, key=["seq_len", "seq_len_kv", "HEAD_DIM", "CAUSAL"])
@triton.jit
def _forward(Q, K, V, Out, scale,
             stride_qb, stride_qh, stride_qs, stride_kb, stride_kh, stride_ks,
             stride_vb, stride_vh, stride_vs, stride_ob, stride_oh, stride_os,
             heads, group, seq_len, seq_len_kv,
             CAUSAL: tl.constexpr, HEAD_DIM: tl.constexpr,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    block = tl.program_id(0)
    b = tl.program_id(1) // heads
    h = tl.program_id(1) % heads
    rows = block * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + b * stride_qb + h * stride_qh + rows[:, None] * stride_qs + dims[None, :],
                mask=rows[:, None] < seq_len, other=0.0)
    k_head = K + b * stride_kb + (h // group) * stride_kh
    v_head = V + b * stride_vb + (h // group) * stride_vh
    offset = seq_len_kv - seq_len  # query i sees keys 0 .. i + offset
    end = seq_len_kv
    if CAUSAL:  # keys past the block's last query's are never seen
        last_seen = (block + 1) * BLOCK_M + offset
        if last_seen < seq_len_kv:
            end = last_seen
    row_max = tl.full([BLOCK_M], float("-inf"), tl.float32)
    row_sum = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    scale_log2 = scale * 1.4426950408889634  # exp2 instead of exp
    for start in range(0, end, BLOCK_N):
        keys = start + cols
        k = tl.load(k_head + keys[None, :] * stride_ks + dims[:, None],
                    mask=keys[None, :] < seq_len_kv, other=0.0)
        s = tl.dot(q, k) * scale_log2
        seen = keys[None, :] < seq_len_kv
        if CAUSAL:
            seen = seen & (keys[None, :] <= rows[:, None] + offset)
        s = tl.where(seen, s, float("-inf"))
        new_max = tl.maximum(row_max, tl.max(s, 1))
        safe_max = tl.where(new_max == float("-inf"), 0.0, new_max)  # rows with nothing seen yet
        p = tl.math.exp2(s - safe_max[:, None])
        correction = tl.math.exp2(row_max - safe_max)
        row_sum = row_sum * correction + tl.sum(p, 1)
        v = tl.load(v_head + keys[:, None] * stride_vs + dims[None, :],
                    mask=keys[:, None] < seq_len_kv, other=0.0)
        acc = acc * correction[:, None] + tl.dot(p.to(v.dtype), v)
        row_max = new_max
    out = acc / row_sum[:, None]
    tl.store(Out + b * stride_ob + h * stride_oh + rows[:, None] * stride_os + dims[None, :],
             out.to(Out.dtype.element_ty), mask=rows[:, None] < seq_len)


def attention(q, k, v, causal, scale):
    """fused attention forward written in Triton (online softmax, autotuned blocks)"""
    batch, heads, seq_len, head_dim = q.shape
    out = torch.empty_like(q)
    grid = lambda meta: (triton.cdiv(seq_len, meta["BLOCK_M"]), batch * heads)
    _forward[grid](q, k, v, out, scale,
                   q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
                   v.stride(0), v.stride(1), v.stride(2), out.stride(0), out.stride(1),
                   out.stride(2), heads, heads // k.size(1), seq_len, k.size(2),
                   CAUSAL=causal, HEAD_DIM=head_dim)
    return out


def supports(problem):
    if problem.device != "cuda":
        return "Triton kernels run on the GPU"
    if problem.dtype_name not in ("fp16", "bf16"):
        return f"written for fp16 and bf16 (tl.dot of {problem.dtype_name} is another kernel)"
    if problem.head_dim not in (16, 32, 64, 128):
        return "head_dim must be 16, 32, 64 or 128 (one block of tl.dot)"
    if problem.direction != "fwd":
        return "forward only: no backward kernel written"
    return True
