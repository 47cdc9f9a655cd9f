"""FlexAttention: attention written as a mask (and score) function, compiled by torch.compile into
a Triton kernel. Its first call at a shape compiles; attnbench's first_call_ms column shows what
that costs, and the other columns what the compiled kernel does.

Every variant attnbench sweeps reaches it as keywords: the causal mask and a sliding `window` as a
block mask, Llama 4's `chunk` in the block mask too, `softcap` as a score mod, `sinks` through the
log-sum-exp it returns, a ragged batch (`cu_seqlens_q`, `cu_seqlens_kv`, q packed
[total, heads, dim]) as one long sequence with a document mask, as FlexAttention's own examples
do. A paged cache it refuses (FlexAttention's paged attention needs a page-table conversion of
its own).
"""
import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

# One compiled function; dynamic=False compiles each shape for itself, as a benchmark should. A
# sweep has more shapes than Dynamo's default recompile limit (past it, flex_attention would run
# uncompiled, and slowly).
torch._dynamo.config.recompile_limit = 256
# MLA is attention with a narrower v (prefill 192 / 128) or v inside k (the absorbed decode's
# 576-wide cache, v its first 512 columns): flex_attention takes q, k and v of their own widths.
KINDS = ("attention", "mla")
_flex = torch.compile(flex_attention, dynamic=False)
_block_masks = {}  # made once per problem (outside the timed calls: the first call makes it)


def _mask_mod(problem, cu_q, cu_kv, device, chunk):
    """Query q_idx may see key kv_idx: same sequence, inside the window and the chunk,
    bottom-right aligned."""
    left, right = problem.window_left, problem.window_right
    if cu_q is None:  # uniform: one sequence per batch entry
        offset = problem.seq_len_kv - problem.seq_len

        def position(b, q_idx, kv_idx):
            return q_idx + offset, kv_idx, True
    else:
        q_seq = torch.repeat_interleave(torch.arange(problem.batch, device=device),
                                        (cu_q[1:] - cu_q[:-1]).long())
        kv_seq = torch.repeat_interleave(torch.arange(problem.batch, device=device),
                                         (cu_kv[1:] - cu_kv[:-1]).long())
        q_start, kv_start = cu_q.long(), cu_kv.long()
        shift = (cu_kv[1:] - cu_kv[:-1]).long() - (cu_q[1:] - cu_q[:-1]).long()

        def position(b, q_idx, kv_idx):
            s = q_seq[q_idx]
            return (q_idx - q_start[s] + shift[s], kv_idx - kv_start[kv_seq[kv_idx]],
                    s == kv_seq[kv_idx])

    def mask(b, h, q_idx, kv_idx):
        pos, key, same = position(b, q_idx, kv_idx)
        seen = same
        if right >= 0:
            seen = seen & (key <= pos + right)
        if left >= 0:
            seen = seen & (key >= pos - left)
        if chunk > 0:
            seen = seen & (key // chunk == pos // chunk)
        return seen

    return mask


def attention(q, k, v, scale, problem, cu_seqlens_q=None, cu_seqlens_kv=None, window=None,
              softcap=0.0, sinks=None, chunk=0):
    """FlexAttention (torch.compile): block mask for causal, window, chunk and ragged; softcap score
    mod; sinks from the returned log-sum-exp"""
    packed = cu_seqlens_q is not None
    if packed:  # [total, heads, dim] -> one batch entry of total rows
        q, k, v = (t.transpose(0, 1).unsqueeze(0) for t in (q, k, v))
    masked = (problem.causal or problem.window_left >= 0 or problem.window_right >= 0 or packed
              or chunk > 0)
    key = (problem.batch, problem.seq_len, problem.seq_len_kv, tuple(problem.q_lens),
           tuple(problem.kv_lens), problem.window_left, problem.window_right, problem.causal,
           chunk, str(q.device))
    block_mask = None
    if masked:
        if key not in _block_masks:
            mod = _mask_mod(problem, cu_seqlens_q, cu_seqlens_kv, q.device, chunk)
            _block_masks[key] = create_block_mask(mod, B=None, H=None, Q_LEN=q.size(2),
                                                  KV_LEN=k.size(2), device=q.device)
        block_mask = _block_masks[key]
    score_mod = None
    if softcap > 0:
        def score_mod(score, b, h, q_idx, kv_idx):
            return softcap * torch.tanh(score / softcap)
    if sinks is None:
        out = _flex(q, k, v, block_mask=block_mask, score_mod=score_mod, scale=scale,
                    enable_gqa=q.size(1) != k.size(1))
    else:
        # A sink joins the softmax's denominator: out * Z / (Z + e^sink) = out * sigmoid(lse - sink).
        out, lse = _flex(q, k, v, block_mask=block_mask, score_mod=score_mod, scale=scale,
                         enable_gqa=q.size(1) != k.size(1), return_lse=True)
        out = out * torch.sigmoid(lse - sinks.view(1, -1, 1)).unsqueeze(-1).to(out.dtype)
    return out.squeeze(0).transpose(0, 1) if packed else out


def supports(problem):
    if problem.dtype_name == "fp8_e4m3":
        return "flex_attention takes no fp8 inputs"
    if problem.kv_layout == "paged":
        return "this example reads a contiguous cache (FlexAttention's paged attention is not wired)"
    if problem.sinks and problem.device == "cpu":
        return ("sinks come from flex_attention's log-sum-exp, which torch.compile's CPU lowering "
                "does not return (torch 2.11); they run on CUDA")
    if problem.packed and problem.direction == "bwd":
        return "attnbench checks the backward of a ragged batch in no layout but the uniform one"
    return True
