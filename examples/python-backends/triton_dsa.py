"""DeepSeek sparse attention (DSA: DeepSeek-V3.2, GLM-5) in Triton, written for attnbench: MLA in
its absorbed form, each query row attending only over its own top-k list of cached tokens. q is
[rows, heads, 576] (the 512 latent columns, then 64 rope ones), the cache one latent head of 576
(bf16, fp16, or fp8_e4m3 under one k scale) read through each row's indices (and the page table),
and v the cache's first 512 columns, never read apart from k. One program per (query row, block of
16-64 heads, split of the top-k list): the row's heads stacked into one tensor-core tile, the
selected tokens gathered BLOCK_N rows of 576 at a time (each row 1152 contiguous bytes), q.k as a
512-wide and a 64-wide dot, p.v over the 512 columns, an online softmax in fp32; a decode's top-k
list split across programs until the GPU is full, the splits merged by a second kernel. attnbench
checks it against float64 at every point it measures.
"""
import os

import torch
import triton
import triton.language as tl

KINDS = ("dsa",)
LOG2E = tl.constexpr(1.4426950408889634)  # a constexpr: a jit function reads no other global
# The cache layouts: uniform [batch, 1, seq_len_kv, 576], packed [total_kv, 1, 576] with
# cu_seqlens_kv, paged [pages, page_size, 1, 576] with a page table (as triton_served's).
UNIFORM, PACKED, PAGED = 0, 1, 2


@triton.jit
def _mm(a, b, INTERPRET: tl.constexpr):
    """a @ b. The interpreter holds bf16 as raw uint16 and its dot multiplies those: it gets the
    same bf16 (or fp16) numbers widened to fp32, which the GPU's tensor cores multiply exactly."""
    if INTERPRET:
        return tl.dot(a.to(tl.float32), b.to(tl.float32))
    else:
        return tl.dot(a, b)


@triton.jit
def _rows(start, hi, idx_row, table_row, kv_base, page_size, stride_kp, stride_kt,
          KV_MODE: tl.constexpr, BLOCK_N: tl.constexpr):
    """Where the cache rows of BLOCK_N entries of the row's top-k list from `start` begin (in
    elements from K), and which entries are chosen (-1: padding, or past the list's end)."""
    n = start + tl.arange(0, BLOCK_N)
    token = tl.load(idx_row + n, mask=n < hi, other=-1)
    chosen = token >= 0  # -1: padding (a row that sees fewer tokens than topk)
    token = tl.where(chosen, token, 0)
    if KV_MODE == 2:  # token t: row t % page_size of page page_table[b][t // page_size]
        page = tl.load(table_row + token // page_size, mask=chosen, other=0)
        at = page.to(tl.int64) * stride_kp + (token % page_size).to(tl.int64) * stride_kt
    else:  # packed: the sequence's first row kv_base; uniform: its batch's
        at = kv_base + token.to(tl.int64) * stride_kt
    return at, chosen


@triton.jit
def _block(at, chosen, q_nope, q_rope, acc, row_max, row_sum, K, qk_scale,
           D_V: tl.constexpr, D_ROPE: tl.constexpr, INTERPRET: tl.constexpr):
    """Gather the cache rows at `at` (those chosen), fold them into the online softmax. Returns
    the updated (acc, row_max, row_sum)."""
    rows = K + at
    k_nope = tl.load(rows[:, None] + tl.arange(0, D_V)[None, :], mask=chosen[:, None], other=0.0)
    if K.dtype.element_ty == tl.float8e4nv:
        # An fp8 cache: its numbers exactly in q's dtype, the scale folded in. q.k reads the
        # tile a second time, transposed, from L1/L2 (not a transposed copy of the converted
        # tile in registers), so both products' tiles stay in shared memory, pipelined.
        k_t = tl.load(rows[None, :] + tl.arange(0, D_V)[:, None], mask=chosen[None, :], other=0.0)
        r_t = tl.load(rows[None, :] + D_V + tl.arange(0, D_ROPE)[:, None], mask=chosen[None, :],
                      other=0.0)
        s = (_mm(q_nope, k_t.to(q_nope.dtype), INTERPRET)
             + _mm(q_rope, r_t.to(q_nope.dtype), INTERPRET))
        k_nope = k_nope.to(q_nope.dtype)
    else:  # q.k through a transposed view of the tile in shared memory
        k_rope = tl.load(rows[:, None] + D_V + tl.arange(0, D_ROPE)[None, :], mask=chosen[:, None],
                         other=0.0)
        s = _mm(q_nope, tl.trans(k_nope), INTERPRET) + _mm(q_rope, tl.trans(k_rope), INTERPRET)
    s = tl.where(chosen[None, :], s * qk_scale, float("-inf"))  # log2 units
    new_max = tl.maximum(row_max, tl.max(s, 1))
    safe_max = tl.where(new_max == float("-inf"), 0.0, new_max)  # nothing chosen yet
    p = tl.math.exp2(s - safe_max[:, None])
    correction = tl.math.exp2(row_max - safe_max)
    row_sum = row_sum * correction + tl.sum(p, 1)
    acc = acc * correction[:, None] + _mm(p.to(q_nope.dtype), k_nope, INTERPRET)  # v = k[:, :D_V]
    return acc, new_max, row_sum


@triton.jit
def _dsa(Q, K, Idx, Out, Part, Lse, CuQ, CuKv, KvLens, Table,
         sm_scale, k_scale, batch, seq_len, seq_len_kv, topk, heads, rows, head_blocks, splits,
         page_size, stride_qb, stride_qs, stride_qh, stride_ob, stride_os, stride_oh,
         stride_ib, stride_is, stride_kb, stride_kp, stride_kt, stride_table,
         KV_MODE: tl.constexpr, PACKED_Q: tl.constexpr, BOUND: tl.constexpr,
         DIRECT: tl.constexpr, D_V: tl.constexpr, D_ROPE: tl.constexpr, BLOCK_H: tl.constexpr,
         BLOCK_N: tl.constexpr, BLOCK_B: tl.constexpr, INTERPRET: tl.constexpr):
    # One flat grid, head blocks fastest (the programs of a row's head blocks read the same cache
    # rows at about the same time, from L2), the last rows first (a prefill's longest lists).
    pid = tl.program_id(0)
    hb = pid % head_blocks
    split = (pid // head_blocks) % splits
    row = rows - 1 - pid // (head_blocks * splits)
    # The row's sequence b and its index i among the sequence's queries.
    if PACKED_Q:  # b: how many sequences end at or before this row
        b = row * 0
        first = 0
        while first < batch:
            ends = first + 1 + tl.arange(0, BLOCK_B)
            b += tl.sum((tl.load(CuQ + ends, mask=ends <= batch, other=rows + 1) <= row).to(tl.int32), 0)
            first += BLOCK_B
        q_start = tl.load(CuQ + b)
        q_len = tl.load(CuQ + b + 1) - q_start
        i = row - q_start
    else:
        b = row // seq_len
        i = row % seq_len
        q_len = seq_len
    kv_base = b.to(tl.int64) * stride_kb  # uniform: the batch's rows (packed: below; paged: 0)
    if KV_MODE == 1:
        kv_start = tl.load(CuKv + b)
        kv_len = tl.load(CuKv + b + 1) - kv_start
        kv_base = kv_start.to(tl.int64) * stride_kt
    elif KV_MODE == 2:
        if BOUND:
            kv_len = tl.load(KvLens + b)
        else:
            kv_len = seq_len_kv
    else:
        kv_len = seq_len_kv
    # The row's list holds at most pos + 1 distinct tokens 0..pos (causal, bottom-right): a
    # prefill's early rows stop there. Then this split's share, whole blocks of BLOCK_N.
    count = topk
    if BOUND:
        count = tl.minimum(topk, tl.maximum(kv_len - q_len + i + 1, 0))
    per_split = tl.cdiv(tl.cdiv(count, splits), BLOCK_N) * BLOCK_N
    lo = split * per_split
    hi = tl.minimum(count, lo + per_split)

    head = hb * BLOCK_H + tl.arange(0, BLOCK_H)
    real = head < heads
    if PACKED_Q:
        q_at = row.to(tl.int64) * stride_qs + head.to(tl.int64) * stride_qh
        o_at = row.to(tl.int64) * stride_os + head.to(tl.int64) * stride_oh
        idx_row = Idx + row.to(tl.int64) * stride_is
    else:
        q_at = b.to(tl.int64) * stride_qb + i.to(tl.int64) * stride_qs + head.to(tl.int64) * stride_qh
        o_at = b.to(tl.int64) * stride_ob + i.to(tl.int64) * stride_os + head.to(tl.int64) * stride_oh
        idx_row = Idx + b.to(tl.int64) * stride_ib + i.to(tl.int64) * stride_is
    dims = tl.arange(0, D_V)
    q_nope = tl.load(Q + q_at[:, None] + dims[None, :], mask=real[:, None], other=0.0)
    q_rope = tl.load(Q + q_at[:, None] + D_V + tl.arange(0, D_ROPE)[None, :], mask=real[:, None],
                     other=0.0)
    table_row = Table + b.to(tl.int64) * stride_table
    qk_scale = sm_scale * k_scale * LOG2E  # an fp8 cache's scale folds into the softmax's
    row_max = tl.full([BLOCK_H], float("-inf"), tl.float32)
    row_sum = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, D_V], tl.float32)
    # The list's next block of cache rows is found one iteration ahead (carried), so that the
    # gather of a block depends on no load of its own iteration: the compiler's pipeliner then
    # keeps num_stages - 1 gathers in flight, not the chain index -> page -> row of one.
    at, chosen = _rows(lo, hi, idx_row, table_row, kv_base, page_size, stride_kp, stride_kt,
                       KV_MODE, BLOCK_N)
    if INTERPRET:  # a while: the interpreter's range takes no run-time bounds
        start = lo
        while start < hi:
            next_at, next_chosen = _rows(start + BLOCK_N, hi, idx_row, table_row, kv_base,
                                         page_size, stride_kp, stride_kt, KV_MODE, BLOCK_N)
            acc, row_max, row_sum = _block(at, chosen, q_nope, q_rope, acc, row_max, row_sum, K,
                                           qk_scale, D_V, D_ROPE, INTERPRET)
            at, chosen = next_at, next_chosen
            start += BLOCK_N
    else:  # a for: the compiler pipelines the gathers (num_stages) ahead of the dots
        for start in range(lo, hi, BLOCK_N):
            next_at, next_chosen = _rows(start + BLOCK_N, hi, idx_row, table_row, kv_base,
                                         page_size, stride_kp, stride_kt, KV_MODE, BLOCK_N)
            acc, row_max, row_sum = _block(at, chosen, q_nope, q_rope, acc, row_max, row_sum, K,
                                           qk_scale, D_V, D_ROPE, INTERPRET)
            at, chosen = next_at, next_chosen
    seen = row_sum > 0  # a row (or a split) with no chosen token: zeros
    if DIRECT:
        out = acc * (k_scale / tl.where(seen, row_sum, 1.0))[:, None]  # v = k: k's scale
        tl.store(Out + o_at[:, None] + dims[None, :], out.to(Out.dtype.element_ty),
                 mask=real[:, None])
    else:  # this split's normalized rows and their log-sum-exp (log2), merged by _merge
        at = (split * rows + row).to(tl.int64) * heads + head
        out = acc / tl.where(seen, row_sum, 1.0)[:, None]
        tl.store(Part + at[:, None] * D_V + dims[None, :], out, mask=real[:, None])
        lse = tl.where(seen, row_max + tl.math.log2(tl.where(seen, row_sum, 1.0)), float("-inf"))
        tl.store(Lse + at, lse, mask=real)


@triton.jit
def _merge(Out, Part, Lse, k_scale, splits, rows, heads, head_blocks, seq_len,
           stride_ob, stride_os, stride_oh,
           PACKED_Q: tl.constexpr, D_V: tl.constexpr, BLOCK_H: tl.constexpr):
    row = tl.program_id(0) // head_blocks
    head = (tl.program_id(0) % head_blocks) * BLOCK_H + tl.arange(0, BLOCK_H)
    real = head < heads
    dims = tl.arange(0, D_V)
    top = tl.full([BLOCK_H], float("-inf"), tl.float32)
    split = 0
    while split < splits:
        at = (split * rows + row).to(tl.int64) * heads + head
        top = tl.maximum(top, tl.load(Lse + at, mask=real, other=float("-inf")))
        split += 1
    safe_top = tl.where(top == float("-inf"), 0.0, top)
    total = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, D_V], tl.float32)
    split = 0
    while split < splits:
        at = (split * rows + row).to(tl.int64) * heads + head
        weight = tl.math.exp2(tl.load(Lse + at, mask=real, other=float("-inf")) - safe_top)
        total += weight
        acc += weight[:, None] * tl.load(Part + at[:, None] * D_V + dims[None, :],
                                         mask=real[:, None], other=0.0)
        split += 1
    out = acc * (k_scale / tl.where(total > 0, total, 1.0))[:, None]
    if PACKED_Q:
        o_at = row.to(tl.int64) * stride_os + head.to(tl.int64) * stride_oh
    else:
        o_at = ((row // seq_len).to(tl.int64) * stride_ob + (row % seq_len).to(tl.int64) * stride_os
                + head.to(tl.int64) * stride_oh)
    tl.store(Out + o_at[:, None] + dims[None, :], out.to(Out.dtype.element_ty), mask=real[:, None])


_SMS = {}


def _sms(device):
    if device not in _SMS:  # the interpreter's CPU: a GPU of 4 SMs, so that decodes still split
        cpu = torch.device(device).type != "cuda"
        _SMS[device] = 4 if cpu else torch.cuda.get_device_properties(device).multi_processor_count
    return _SMS[device]


def _tiles(heads, fp8):
    """(BLOCK_H, BLOCK_N, num_warps, num_stages, resident): the heads of a row in tiles of 16, 32
    or 64 rows (64: the most whose fp32 accumulator of 64 x 512 fits the registers of 8 warps;
    the tensor cores' wgmma from 64 rows), the gathered cache rows in blocks of BLOCK_N,
    num_stages - 1 blocks of them in flight in shared memory, and how many such programs an SM
    holds at once (shared memory, registers). Each fits sm_90 without spilling registers
    (tests/triton_dsa_compile_test.py). Timed on an H100 (bf16 cache, topk 2048, 32k tokens,
    CUDA graphs): 16 heads, at the splits chosen, BLOCK_N 32 with 4 warps beat 64 with 8 (59
    against 76 us at batch 32, 158 against 194 at batch 128) and, in a 4096-row prefill, 16
    (2.8 against 3.5 ms); 128 heads: BLOCK_N 32 and 3 stages beat 16 and 4 (141 against 196 us
    at batch 32)."""
    if heads <= 16:  # fp8: 8 warps, the converted tiles' registers spread over more threads
        return (16, 32, 8, 3, 1) if fp8 else (16, 32, 4, 3, 2)
    if heads <= 32:
        return 32, 32, 8, 3, 1
    return 64, 32, 8, 3, 1


def _splits(programs, count, block_n, resident, device):
    """How many programs share a row's top-k list: enough to fill every SM with the programs it
    holds at once (a decode: 8 a row at batch 32 and 16 heads on an H100, 2 at batch 128), each
    with 4 blocks of the list at least, 8 at most; 1 (no merge kernel) where the rows already
    fill the GPU (a prefill, a large decode batch)."""
    fill = resident * _sms(device) // max(programs, 1)
    return max(1, min(fill, triton.cdiv(count, 4 * block_n), 8))


def supports(problem):
    # CPU points through Triton's interpreter only (TRITON_INTERPRET=1, a test: slow).
    if problem.device != "cuda" and os.environ.get("TRITON_INTERPRET") != "1":
        return "a Triton GPU kernel: CUDA points only (CPU ones under TRITON_INTERPRET=1)"
    if problem.direction != "fwd":
        return "forward only (no backward kernel)"
    dtype = getattr(problem, "dtype_name", None) or str(problem.dtype).replace("torch.", "")
    if problem.dtype not in (torch.bfloat16, torch.float16):
        return f"queries in bf16 or fp16, not {dtype} (an fp8 cache under them: kv_dtype)"
    kv_dtype = getattr(problem, "kv_dtype", "") or ""
    if kv_dtype not in ("", "fp8_e4m3", "bf16", "fp16"):
        return f"a cache in q's dtype or fp8_e4m3, not {kv_dtype}"
    d, dv = getattr(problem, "head_dim", 0) or 0, getattr(problem, "head_dim_v", 0) or 0
    if d and dv:  # the absorbed MLA's widths: v the first dv columns, the rest (rope) after them
        if dv & (dv - 1) or not 16 <= dv <= 512:
            return f"head_dim_v a power of two from 16 to 512, not {dv}"
        rope = d - dv
        if rope & (rope - 1) or not 16 <= rope <= dv:
            return f"head_dim - head_dim_v (the rope part) a power of two from 16, not {rope}"
    return True


def dsa_attention(q, k, v, indices, scale, cu_seqlens_q=None, cu_seqlens_kv=None, kv_lens=None,
                  page_table=None, k_scale=1.0, v_scale=1.0, problem=None):
    """DeepSeek sparse attention in Triton: absorbed MLA over each row's top-k tokens (paged,
    packed or contiguous cache; bf16, fp16 or fp8_e4m3 under one scale), a row's heads in one
    tile, the top-k list split across programs in a decode and merged"""
    d, dv = q.size(-1), v.size(-1)
    if v.data_ptr() != k.data_ptr() or v.stride()[:-1] != k.stride()[:-1] or k.size(-1) != d:
        raise NotImplementedError("v a view of k's first columns (absorbed MLA), k as wide as q")
    if q.stride(-1) != 1 or k.stride(-1) != 1 or indices.stride(-1) != 1:
        raise NotImplementedError("q, k and indices with their last dimension contiguous")
    del v_scale  # v is k's first columns: k's numbers under k's scale
    mode = PAGED if page_table is not None else PACKED if cu_seqlens_kv is not None else UNIFORM
    packed_q = q.dim() == 3
    heads, topk = q.size(1), indices.size(-1)  # q [total_q, heads, d] or [batch, heads, seq, d]
    if packed_q:  # q [total_q, heads, d], indices [total_q, topk]
        rows = q.size(0)
        if cu_seqlens_q is None:  # as many queries in each sequence
            batch = (page_table if mode == PAGED else kv_lens if kv_lens is not None else
                     cu_seqlens_kv[1:]).size(0)
            cu_seqlens_q = torch.arange(0, rows + 1, rows // batch, dtype=torch.int32,
                                        device=q.device)
        batch, seq_len = cu_seqlens_q.size(0) - 1, 1
        out = torch.empty((rows, heads, dv), dtype=q.dtype, device=q.device)
        qb, qs, qh = 0, q.stride(0), q.stride(1)
        ob, os_, oh = 0, out.stride(0), out.stride(1)
        ib, is_ = 0, indices.stride(0)
    else:  # q [batch, heads, seq_len, d], indices [batch, seq_len, topk]
        batch, seq_len = q.size(0), q.size(2)
        rows = batch * seq_len
        out = torch.empty((batch, heads, seq_len, dv), dtype=q.dtype, device=q.device)
        qb, qh, qs = q.stride(0), q.stride(1), q.stride(2)
        ob, oh, os_ = out.stride(0), out.stride(1), out.stride(2)
        ib, is_ = indices.stride(0), indices.stride(1)
    if mode == PAGED:  # [pages, page_size, 1, d]
        kb, kp, kt, page_size, seq_len_kv = 0, k.stride(0), k.stride(1), k.size(1), 1 << 30
    elif mode == PACKED:  # [total_kv, 1, d]
        kb, kp, kt, page_size, seq_len_kv = 0, 0, k.stride(0), 1, 0
    else:  # [batch, 1, seq_len_kv, d]
        kb, kp, kt, page_size, seq_len_kv = k.stride(0), 0, k.stride(2), 1, k.size(2)
    if rows == 0:
        return out
    fp8 = k.dtype == torch.float8_e4m3fn
    block_h, block_n, warps, stages, resident = _tiles(heads, fp8)
    head_blocks = triton.cdiv(heads, block_h)
    splits = _splits(rows * head_blocks, topk, block_n, resident, q.device)
    direct = splits == 1
    part = lse = out  # unused when direct
    if not direct:
        part = torch.empty((splits, rows, heads, dv), dtype=torch.float32, device=q.device)
        lse = torch.empty((splits, rows, heads), dtype=torch.float32, device=q.device)
    interpret = os.environ.get("TRITON_INTERPRET") == "1"
    none = out  # a placeholder pointer for the tensors a layout does not have
    bound = mode != PAGED or kv_lens is not None
    _dsa[(rows * head_blocks * splits,)](
        q, k, indices, out, part, lse, cu_seqlens_q if packed_q else none,
        cu_seqlens_kv if mode == PACKED else none,
        kv_lens if mode == PAGED and kv_lens is not None else none,
        page_table if mode == PAGED else none,
        float(scale), float(k_scale), batch, seq_len, seq_len_kv, topk, heads, rows, head_blocks,
        splits, page_size, qb, qs, qh, ob, os_, oh, ib, is_, kb, kp, kt,
        page_table.stride(0) if mode == PAGED else 0,
        KV_MODE=mode, PACKED_Q=packed_q, BOUND=bound, DIRECT=direct, D_V=dv, D_ROPE=d - dv,
        BLOCK_H=block_h, BLOCK_N=block_n, BLOCK_B=128, INTERPRET=interpret,
        num_warps=warps, num_stages=stages)
    if not direct:
        merge_h = min(block_h, 16)
        merge_blocks = triton.cdiv(heads, merge_h)
        _merge[(rows * merge_blocks,)](out, part, lse, float(k_scale), splits, rows, heads,
                                       merge_blocks, seq_len, ob, os_, oh, PACKED_Q=packed_q,
                                       D_V=dv, BLOCK_H=merge_h, num_warps=4)
    return out
