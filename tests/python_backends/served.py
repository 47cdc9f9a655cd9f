"""Python backends and 2026's variants: `served` takes the keywords of sinks, a chunk (as the
uniform mask, which has it) and an fp8 cache's scales, and applies them; `plain` takes none of
them, so it is refused for sinks and an fp8 cache by name, and runs a uniform chunk through the
mask it takes."""
import torch


def _attention(q, k, v, scale, mask, sinks=None):
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    scores = (q @ k.transpose(-2, -1)) * scale
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    if sinks is not None:  # a column of the softmax per head, dropped after it
        column = sinks.to(scores.dtype).view(1, -1, 1, 1).expand(*scores.shape[:-1], 1)
        weights = torch.softmax(torch.cat([scores, column], -1), -1)[..., :-1]
    else:
        weights = torch.softmax(scores, -1)
    return weights @ v


def served(q, k, v, scale, mask, sinks=None, k_scale=1.0, v_scale=1.0):
    """sinks, chunks through the mask, an fp8 cache dequantized in the call"""
    if k.dtype == torch.float8_e4m3fn:
        k, v = k.to(q.dtype) * k_scale, v.to(q.dtype) * v_scale
    return _attention(q, k, v, scale, mask, sinks)


def plain(q, k, v, scale, mask):
    """the mask alone"""
    return _attention(q, k, v, scale, mask)


def k_only(q, k, v, scale, mask, k_scale=1.0):
    """takes k's scale and not v's: no fp8 cache for it"""
    return _attention(q, k.to(q.dtype) * k_scale, v.to(q.dtype), scale, mask)


def varlen_masked(q, k, v, scale, mask, cu_seqlens_q, cu_seqlens_kv):
    """a ragged batch and a mask, but no chunk keyword: a packed chunk has no mask to carry it"""
    raise AssertionError("never called for a ragged chunk")


def fp8_full(q, k, v, scale, mask, q_scale, k_scale, v_scale):
    """q, k and v in fp8, each under its scale; the output in bf16"""
    q, k, v = (t.to(torch.bfloat16) * s for t, s in ((q, q_scale), (k, k_scale), (v, v_scale)))
    return _attention(q, k, v, scale, mask)
