"""Served attention in float64, sequence by sequence: the reference that
tests/triton_served_test.py (CPU) and tools/triton_served_gpu_check.py (GPU) check the Triton
kernel against. Masks are bottom-right (the last query sees the last key), as a decode's are."""
import torch


def reference(qs, ks, vs, scale, left=-1, right=0, chunk=0, softcap=0.0, sinks=None):
    """Per sequence: q [q_len, heads, d], k [kv_len, kv_heads, d] and v [kv_len, kv_heads, dv],
    dequantized; window (left, right) with -1 unbounded, chunk 0 none, softcap 0 none, sinks one
    logit per query head or None. Returns per sequence [q_len, heads, dv] in float64."""
    outs = []
    for q, k, v in zip(qs, ks, vs):
        q, k, v = q.double(), k.double(), v.double()
        heads = q.size(1)
        k = k.repeat_interleave(heads // k.size(1), 1)
        v = v.repeat_interleave(heads // v.size(1), 1)
        s = torch.einsum("qhd,khd->hqk", q, k) * scale
        if softcap > 0:
            s = softcap * torch.tanh(s / softcap)
        pos = torch.arange(q.size(0), device=q.device).unsqueeze(1) + k.size(0) - q.size(0)
        key = torch.arange(k.size(0), device=q.device).unsqueeze(0)
        hidden = torch.zeros(q.size(0), k.size(0), dtype=torch.bool, device=q.device)
        if right >= 0:
            hidden |= key > pos + right
        if left >= 0:
            hidden |= key < pos - left
        if chunk > 0:
            hidden |= key // chunk != pos // chunk
        s = s.masked_fill(hidden, float("-inf"))
        if sinks is not None:  # a logit per head joins the softmax, with no value
            s = torch.cat([s, sinks.double().view(heads, 1, 1).expand(heads, q.size(0), 1)], -1)
        p = torch.softmax(s, -1)
        if sinks is not None:
            p = p[..., :-1]
        outs.append(torch.einsum("hqk,khd->qhd", p, v))
    return outs
