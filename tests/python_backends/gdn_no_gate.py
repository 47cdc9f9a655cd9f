"""A planted fault: torch_linear.py's gdn recurrence (the reference) ignoring g: no decay."""
import torch

KINDS = ("gdn",)
EPS = 1e-6


def _l2norm(x):
    x = x.float()
    return x * torch.rsqrt(x.square().sum(-1, keepdim=True) + EPS)


def gdn_recurrent(q, k, v, g, beta, state, state_indices, cu_seqlens_q, scale):
    """gated delta-net without its gate (a planted fault: g is ignored)"""
    del g  # the fault: S is never decayed
    tokens, hk, _ = q.shape
    hv, dv = v.size(1), v.size(2)
    offsets = cu_seqlens_q.tolist()
    batch = len(offsets) - 1
    lens = [offsets[b + 1] - offsets[b] for b in range(batch)]
    device = q.device
    slots = state_indices.to(device=state.device, dtype=torch.long)
    o = torch.zeros(tokens, hv, dv, dtype=torch.float32, device=device)
    if batch == 0 or tokens == 0:
        return o.to(q.dtype)
    qn = _l2norm(q).repeat_interleave(hv // hk, dim=1)
    kn = _l2norm(k).repeat_interleave(hv // hk, dim=1)
    vf, bf = v.float(), beta.float()
    s = state.index_select(0, slots).to(device=device, dtype=torch.float32)
    starts = torch.tensor(offsets[:-1], dtype=torch.long, device=device)
    for i in range(max(lens)):
        seq = torch.tensor([b for b in range(batch) if lens[b] > i], dtype=torch.long,
                           device=device)
        rows = starts[seq] + i
        cur = s[seq]
        kt = kn[rows]
        u = bf[rows][..., None] * (vf[rows] - torch.einsum("nhkv,nhk->nhv", cur, kt))
        cur = cur + kt[..., :, None] * u[..., None, :]
        o[rows] = scale * torch.einsum("nhkv,nhk->nhv", cur, qn[rows])
        s[seq] = cur
    state.index_copy_(0, slots, s.to(device=state.device, dtype=state.dtype))
    return o.to(q.dtype)
