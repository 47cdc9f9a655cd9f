"""Served attention in Triton, written for attnbench: decode, 2-8 queries a sequence and mixed
batches of prefills and decodes over a paged, packed or contiguous cache, the cache in bf16, fp16
or fp8_e4m3 under bf16 or fp16 queries (k and v dequantized in registers, one scale each), with
grouped-query heads, sinks, a sliding window, chunked local attention and a softcap. What an
engine's Triton backend does: one program per (sequence, query block, kv head) with the query
heads of its group stacked into the rows of one tensor-core tile, the keys of a long sequence split
across programs (split-KV) and the splits merged by a second kernel. attnbench checks it against
float64 at every point it measures.
"""
import os

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)  # a constexpr: a jit function reads no other global
# The cache layouts: the harness's uniform [batch, kv_heads, seq_len_kv, dim], packed [total_kv,
# kv_heads, dim] with cu_seqlens_kv, paged [pages, page_size, kv_heads, dim] with a page table.
UNIFORM, PACKED, PAGED = 0, 1, 2


@triton.jit
def _key_rows(b, keys, kv_start, Table, stride_table, page_size, stride_kb, stride_kt,
              KV_MODE: tl.constexpr):
    """Where each key of sequence b starts in the cache, in elements (before the head's offset)."""
    if KV_MODE == 2:
        page = tl.load(Table + b * stride_table + keys // page_size)
        return page.to(tl.int64) * stride_kb + (keys % page_size).to(tl.int64) * stride_kt
    elif KV_MODE == 1:
        return (kv_start + keys).to(tl.int64) * stride_kt
    else:
        return b.to(tl.int64) * stride_kb + keys.to(tl.int64) * stride_kt


@triton.jit
def _attend(Q, K, V, Out, Part, Stats, Sinks, CuQ, CuKv, KvLens, Table,
            sm_scale, k_scale, v_scale, softcap, left, right, chunk, page_size,
            seq_len, seq_len_kv, q_blocks, splits, group, rows, heads,
            stride_qb, stride_qs, stride_qh, stride_ob, stride_os, stride_oh,
            stride_kb, stride_kt, stride_kh, stride_vb, stride_vt, stride_vh, stride_table,
            KV_MODE: tl.constexpr, PACKED_Q: tl.constexpr, HAS_SINKS: tl.constexpr,
            DIRECT: tl.constexpr, HEAD_DIM: tl.constexpr, HEAD_DIM_V: tl.constexpr,
            GROUP_P2: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_M: tl.constexpr,
            BLOCK_N: tl.constexpr):
    b = tl.program_id(0) // q_blocks
    q_block = tl.program_id(0) % q_blocks
    kv_head = tl.program_id(1)
    split = tl.program_id(2)
    if PACKED_Q:
        q_start = tl.load(CuQ + b)
        q_len = tl.load(CuQ + b + 1) - q_start
    else:
        q_start = b * seq_len
        q_len = seq_len
    if q_block * BLOCK_Q >= q_len:
        return
    kv_start = b * 0
    if KV_MODE == 2:
        kv_len = tl.load(KvLens + b)
    elif KV_MODE == 1:
        kv_start = tl.load(CuKv + b)
        kv_len = tl.load(CuKv + b + 1) - kv_start
    else:
        kv_len = seq_len_kv
    # Row m of the tile: query q_block * BLOCK_Q + m // GROUP_P2 of the sequence, query head
    # kv_head * group + m % GROUP_P2 (the padding of a group to a power of two masked).
    m = tl.arange(0, BLOCK_M)
    query = q_block * BLOCK_Q + m // GROUP_P2
    head = kv_head * group + m % GROUP_P2
    valid = (query < q_len) & (m % GROUP_P2 < group)
    pos = kv_len - q_len + query  # bottom-right: the last query sees the last key
    # The keys any row of the block may see, then this split's share of them.
    first = kv_len - q_len + q_block * BLOCK_Q
    last = tl.minimum(first + BLOCK_Q - 1, kv_len - 1)
    lo = kv_len * 0
    hi = kv_len
    if right >= 0:
        hi = tl.minimum(hi, last + right + 1)
    if left >= 0:
        lo = tl.maximum(lo, first - left)
    if chunk > 0:
        lo = tl.maximum(lo, tl.maximum(first, 0) // chunk * chunk)
        hi = tl.minimum(hi, last // chunk * chunk + chunk)
    span = tl.maximum(hi - lo, 0)
    per_split = tl.cdiv(tl.cdiv(span, splits), BLOCK_N) * BLOCK_N
    split_lo = lo + split * per_split
    split_hi = tl.minimum(hi, split_lo + per_split)

    dims = tl.arange(0, HEAD_DIM)
    dims_v = tl.arange(0, HEAD_DIM_V)
    q_rows = (q_start + query).to(tl.int64)
    if PACKED_Q:
        q_at = q_rows * stride_qs + head.to(tl.int64) * stride_qh
    else:
        q_at = b.to(tl.int64) * stride_qb + query.to(tl.int64) * stride_qs + head.to(tl.int64) * stride_qh
    q = tl.load(Q + q_at[:, None] + dims[None, :], mask=valid[:, None], other=0.0)
    k_head = K + kv_head.to(tl.int64) * stride_kh
    v_head = V + kv_head.to(tl.int64) * stride_vh
    qk_scale = sm_scale * k_scale  # an fp8 cache's k scale folds into the softmax scale
    row_max = tl.full([BLOCK_M], float("-inf"), tl.float32)
    row_sum = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM_V], tl.float32)
    n = tl.arange(0, BLOCK_N)
    start = split_lo
    while start < split_hi:  # a while, not a range: Triton's interpreter (the CPU test) needs it
        keys = start + n
        inside = keys < split_hi
        k_at = _key_rows(b, keys, kv_start, Table, stride_table, page_size, stride_kb, stride_kt,
                         KV_MODE)
        k = tl.load(k_head + k_at[None, :] + dims[:, None], mask=inside[None, :], other=0.0)
        s = tl.dot(q, k.to(q.dtype)) * qk_scale
        if softcap > 0:  # cap * tanh(s / cap), tanh through exp2
            e = tl.math.exp2(s * (2 * LOG2E / softcap))
            s = softcap * (1 - 2 / (e + 1))
        s = s * LOG2E
        seen = inside[None, :] & valid[:, None]
        if right >= 0:
            seen = seen & (keys[None, :] <= pos[:, None] + right)
        if left >= 0:
            seen = seen & (keys[None, :] >= pos[:, None] - left)
        if chunk > 0:
            seen = seen & (keys[None, :] // chunk == pos[:, None] // chunk)
        s = tl.where(seen, s, float("-inf"))
        new_max = tl.maximum(row_max, tl.max(s, 1))
        safe_max = tl.where(new_max == float("-inf"), 0.0, new_max)  # nothing seen yet
        p = tl.math.exp2(s - safe_max[:, None])
        correction = tl.math.exp2(row_max - safe_max)
        row_sum = row_sum * correction + tl.sum(p, 1)
        v_at = _key_rows(b, keys, kv_start, Table, stride_table, page_size, stride_vb, stride_vt,
                         KV_MODE)
        v = tl.load(v_head + v_at[:, None] + dims_v[None, :], mask=inside[:, None], other=0.0)
        acc = acc * correction[:, None] + tl.dot(p.to(q.dtype), v.to(q.dtype))
        row_max = new_max
        start += BLOCK_N

    if DIRECT:  # one split: finish here (the sink joins the max and the sum once)
        if HAS_SINKS:
            sink = tl.load(Sinks + head, mask=valid, other=0.0) * LOG2E
            top = tl.maximum(row_max, sink)
            keep = tl.math.exp2(row_max - top)
            row_sum = row_sum * keep + tl.math.exp2(sink - top)
            acc = acc * keep[:, None]
        out = acc * (v_scale / tl.where(row_sum > 0, row_sum, 1.0))[:, None]
        if PACKED_Q:
            o_at = q_rows * stride_os + head.to(tl.int64) * stride_oh
        else:
            o_at = b.to(tl.int64) * stride_ob + query.to(tl.int64) * stride_os + head.to(tl.int64) * stride_oh
        tl.store(Out + o_at[:, None] + dims_v[None, :], out.to(Out.dtype.element_ty),
                 mask=valid[:, None])
    else:  # this split's unnormalized rows and their (max, sum), merged by _merge
        at = (split * rows + q_rows) * heads + head
        tl.store(Part + at[:, None] * HEAD_DIM_V + dims_v[None, :], acc, mask=valid[:, None])
        tl.store(Stats + at * 2, row_max, mask=valid)
        tl.store(Stats + at * 2 + 1, row_sum, mask=valid)


@triton.jit
def _merge(Out, Part, Stats, Sinks, v_scale, splits, rows, heads, seq_len,
           stride_ob, stride_os, stride_oh,
           PACKED_Q: tl.constexpr, HAS_SINKS: tl.constexpr, HEAD_DIM_V: tl.constexpr):
    row = tl.program_id(0)
    head = tl.program_id(1)
    dims = tl.arange(0, HEAD_DIM_V)
    top = tl.load(Stats + (row * heads + head) * 2)
    split = 1
    while split < splits:
        top = tl.maximum(top, tl.load(Stats + ((split * rows + row) * heads + head) * 2))
        split += 1
    if HAS_SINKS:
        sink = tl.load(Sinks + head) * LOG2E
        top = tl.maximum(top, sink)
    safe_top = tl.where(top == float("-inf"), 0.0, top)
    total = tl.load(Stats + 1) * 0.0
    acc = tl.zeros([HEAD_DIM_V], tl.float32)
    split = 0
    while split < splits:
        at = (split * rows + row) * heads + head
        weight = tl.math.exp2(tl.load(Stats + at * 2) - safe_top)
        total += weight * tl.load(Stats + at * 2 + 1)
        acc += weight * tl.load(Part + at * HEAD_DIM_V + dims)
        split += 1
    if HAS_SINKS:
        total += tl.math.exp2(sink - safe_top)
    out = acc * (v_scale / tl.where(total > 0, total, 1.0))
    if PACKED_Q:
        o_at = row.to(tl.int64) * stride_os + head * stride_oh
    else:
        o_at = (row // seq_len).to(tl.int64) * stride_ob + (row % seq_len) * stride_os + head * stride_oh
    tl.store(Out + o_at + dims, out.to(Out.dtype.element_ty))


_SMS = {}


def _sms(device):
    if device not in _SMS:  # the interpreter's CPU: a GPU of 4 SMs, so that decodes still split
        cpu = torch.device(device).type != "cuda"
        _SMS[device] = 4 if cpu else torch.cuda.get_device_properties(device).multi_processor_count
    return _SMS[device]


def _splits(programs, keys, block_n, device):
    """How many programs share a sequence's keys: enough to fill the GPU twice over (decode), each
    with 4 key blocks at least; 1 (no merge kernel) where the programs already fill it."""
    return max(1, min(triton.cdiv(2 * _sms(device), programs), triton.cdiv(keys, 4 * block_n), 32))


def _pow2(n):
    return 1 << max(0, (int(n) - 1).bit_length())


def supports(problem):
    # CPU points through Triton's interpreter only (TRITON_INTERPRET=1, a test: fp16, slow).
    if problem.device != "cuda" and os.environ.get("TRITON_INTERPRET") != "1":
        return "a Triton GPU kernel: CUDA points only (CPU ones under TRITON_INTERPRET=1)"
    if problem.direction != "fwd":
        return "forward only (no backward kernel)"
    if problem.dtype_name not in ("bf16", "fp16"):
        return f"queries in bf16 or fp16, not {problem.dtype_name} (an fp8 cache under them: kv_dtype)"
    # Triton's interpreter (CUDA tensors too: it copies them to the host) holds bf16 as raw uint16,
    # numpy having no bf16, and its dots multiply those: the output is garbage (relative error ~1e9).
    # fp16 it computes right; compiled for the GPU, both.
    if problem.dtype_name == "bf16" and os.environ.get("TRITON_INTERPRET") == "1":
        return "bf16 under Triton's interpreter (TRITON_INTERPRET=1), which reads bf16 wrongly: fp16 there"
    widths = (("head_dim", problem.head_dim), ("head_dim_v", problem.head_dim_v or problem.head_dim))
    for name, width in widths:
        if width < 16 or width > 256 or width & (width - 1):
            return f"{name} a power of two from 16 to 256, not {width}"
    return True


def attention(q, k, v, scale, problem, window=(-1, -1), softcap=0.0, chunk=0, sinks=None,
              cu_seqlens_q=None, cu_seqlens_kv=None, kv_lens=None, page_table=None,
              k_scale=1.0, v_scale=1.0):
    """served attention in Triton: decode, multi-query and mixed batches over paged, packed or
    contiguous caches (bf16, fp16, fp8_e4m3), GQA tiles, split-KV, sinks, window, chunk"""
    packed_q = cu_seqlens_q is not None
    mode = PAGED if page_table is not None else PACKED if cu_seqlens_kv is not None else UNIFORM
    batch, heads, kv_heads = problem.batch, problem.heads, problem.kv_heads
    group = heads // kv_heads
    dim, dim_v = q.size(-1), v.size(-1)
    if packed_q:  # q [total_q, heads, dim]
        rows = q.size(0)
        stride_qb, stride_qs, stride_qh = 0, q.stride(0), q.stride(1)
        out = torch.empty((rows, heads, dim_v), dtype=q.dtype, device=q.device)
        stride_ob, stride_os, stride_oh = 0, out.stride(0), out.stride(1)
    else:  # q [batch, heads, seq_len, dim]
        rows = batch * problem.seq_len
        stride_qb, stride_qh, stride_qs = q.stride(0), q.stride(1), q.stride(2)
        out = torch.empty((batch, heads, problem.seq_len, dim_v), dtype=q.dtype, device=q.device)
        stride_ob, stride_oh, stride_os = out.stride(0), out.stride(1), out.stride(2)
    if mode == PAGED:  # [pages, page_size, kv_heads, dim]
        kb, kt, kh, vb, vt, vh = k.stride(0), k.stride(1), k.stride(2), v.stride(0), v.stride(1), v.stride(2)
        page_size = k.size(1)
    elif mode == PACKED:  # [total_kv, kv_heads, dim]
        kb, kt, kh, vb, vt, vh = 0, k.stride(0), k.stride(1), 0, v.stride(0), v.stride(1)
        page_size = 1
    else:  # [batch, kv_heads, seq_len_kv, dim]
        kb, kh, kt, vb, vh, vt = k.stride(0), k.stride(1), k.stride(2), v.stride(0), v.stride(1), v.stride(2)
        page_size = 1
    # Tiles: a group's heads (padded to a power of two) times a block of queries, 16 rows at least
    # (the tensor cores' smallest), 64 at most at head_dim 256 (registers), 128 otherwise.
    group_p2 = _pow2(group)
    most = 64 if max(dim, dim_v) > 128 else 128
    block_q = max(1, min(_pow2(problem.seq_len), most // group_p2))
    block_m = max(16, block_q * group_p2)
    block_n = 32 if max(dim, dim_v) > 128 else 64
    q_blocks = triton.cdiv(problem.seq_len, block_q)
    splits = _splits(batch * q_blocks * kv_heads, problem.seq_len_kv, block_n, q.device)
    direct = splits == 1
    part = stats = out  # unused when direct
    if not direct:
        part = torch.empty((splits, rows, heads, dim_v), dtype=torch.float32, device=q.device)
        stats = torch.empty((splits, rows, heads, 2), dtype=torch.float32, device=q.device)
    left, right = window
    warps = 8 if block_m * max(dim, dim_v) >= 128 * 128 else 4
    none = out  # a placeholder pointer for the tensors a layout does not have
    _attend[(batch * q_blocks, kv_heads, splits)](
        q, k, v, out, part, stats, sinks if sinks is not None else none,
        cu_seqlens_q if packed_q else none, cu_seqlens_kv if mode == PACKED else none,
        kv_lens if mode == PAGED else none, page_table if mode == PAGED else none,
        scale, k_scale, v_scale, softcap, left, right, chunk, page_size,
        problem.seq_len, problem.seq_len_kv, q_blocks, splits, group, rows, heads,
        stride_qb, stride_qs, stride_qh, stride_ob, stride_os, stride_oh,
        kb, kt, kh, vb, vt, vh, page_table.stride(0) if mode == PAGED else 0,
        KV_MODE=mode, PACKED_Q=packed_q, HAS_SINKS=sinks is not None, DIRECT=direct,
        HEAD_DIM=dim, HEAD_DIM_V=dim_v, GROUP_P2=group_p2, BLOCK_Q=block_q, BLOCK_M=block_m,
        BLOCK_N=block_n, num_warps=warps, num_stages=2)
    if not direct:
        _merge[(rows, heads)](out, part, stats, sinks if sinks is not None else none, v_scale,
                              splits, rows, heads, problem.seq_len, stride_ob, stride_os, stride_oh,
                              PACKED_Q=packed_q, HAS_SINKS=sinks is not None, HEAD_DIM_V=dim_v,
                              num_warps=1)
    return out
