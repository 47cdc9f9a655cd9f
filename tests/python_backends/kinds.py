"""Python backends that declare the problem kinds they run: one as its function's attribute, a
plain string (one kind), one without a declaration (attention, the default)."""
import torch


def _attention(q, k, v, scale, causal):
    scores = (q @ k.transpose(-2, -1)) * scale
    if causal:
        n, m = q.shape[-2], k.shape[-2]
        seen = torch.ones(n, m, dtype=torch.bool).tril(m - n)  # bottom-right
        scores = scores.masked_fill(~seen, float("-inf"))
    return torch.softmax(scores, -1) @ v


def mla_only(q, k, v, scale, causal):
    """MLA alone: q·k and v of their own widths"""
    return _attention(q, k, v, scale, causal)


mla_only.kinds = "mla"


def attention_only(q, k, v, scale, causal):
    """attention alone (no declaration: the default)"""
    return _attention(q, k, v, scale, causal)
