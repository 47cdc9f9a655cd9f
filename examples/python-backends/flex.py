"""FlexAttention: attention written as a mask (or score) function, compiled by torch.compile into
a Triton kernel. Its first call at a shape compiles; attnbench's first_call_ms column shows what
that costs, and the other columns what the compiled kernel does.
"""
import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

# One compiled function; dynamic=False compiles each shape for itself, as a benchmark should. A
# sweep has more shapes than Dynamo's default recompile limit (past it, flex_attention would run
# uncompiled, and slowly).
torch._dynamo.config.recompile_limit = 256
_flex = torch.compile(flex_attention, dynamic=False)
_block_masks = {}  # made once per shape (outside the timed calls: the first call makes it)

WINDOW = 4096  # sliding_window's keys per query


def _block_mask(q, k, window=None):
    key = (q.size(2), k.size(2), str(q.device), window)
    if key not in _block_masks:
        offset = k.size(2) - q.size(2)  # attnbench aligns the causal mask bottom-right

        def causal(b, h, q_idx, kv_idx):
            return q_idx + offset >= kv_idx

        def sliding(b, h, q_idx, kv_idx):
            return (q_idx + offset >= kv_idx) & (q_idx + offset - kv_idx < window)

        _block_masks[key] = create_block_mask(sliding if window else causal, B=None, H=None,
                                              Q_LEN=q.size(2), KV_LEN=k.size(2),
                                              device=q.device)
    return _block_masks[key]


def attention(q, k, v, causal, scale):
    """FlexAttention (torch.compile) with a causal block mask"""
    block_mask = _block_mask(q, k) if causal else None
    return _flex(q, k, v, block_mask=block_mask, scale=scale, enable_gqa=q.size(1) != k.size(1))


def sliding_window(q, k, v, causal, scale):
    """FlexAttention with a causal sliding-window block mask (WINDOW keys per query)"""
    return _flex(q, k, v, block_mask=_block_mask(q, k, WINDOW), scale=scale,
                 enable_gqa=q.size(1) != k.size(1))


def supports(problem):
    if problem.dtype_name == "fp8_e4m3":
        return "flex_attention takes no fp8 inputs"
    return True


def supports_sliding_window(problem):
    if not problem.causal:
        return "a sliding window is a causal mask"
    if problem.seq_len_kv > WINDOW:
        # attnbench's float64 reference has no window: measured where the window spans every
        # key, so the rows compare the window's mask function against plain causal attention.
        return f"seq_len_kv {problem.seq_len_kv} > the window ({WINDOW}): attnbench's reference has no window"
    return supports(problem)
