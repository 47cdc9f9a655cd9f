"""A backend that keeps its causal mask per shape between calls, as FlexAttention users keep a
block mask: made at a forward point, it must serve the backward point at the same shape too (the
harness's forward points run in inference mode, whose tensors autograd cannot save)."""
import torch

_masks = {}


def attention(q, k, v, scale, problem):
    s, s_kv = q.size(-2), k.size(-2)
    key = (s, s_kv, str(q.device))
    if key not in _masks:  # bottom-right causal: query i sees keys j <= i + s_kv - s
        _masks[key] = torch.ones(s, s_kv, dtype=torch.bool, device=q.device).triu(s_kv - s + 1)
    scores = (q @ k.transpose(-2, -1)) * scale
    if problem.causal:
        scores = scores.masked_fill(_masks[key], float("-inf"))
    return scores.softmax(-1) @ v
