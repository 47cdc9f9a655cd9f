"""The PyTorch recurrent reference for the linear-attention kinds `gdn` (gated delta-net:
Qwen3-Next, Qwen3.5) and `kda` (Kimi delta attention: Kimi Linear), written for attnbench from
the contract in docs/linear-attention.md: correct and simple, on the CPU and on CUDA, never fast.

What runs. One step a token, in order, every sequence's value heads at once: the sequences are
packed ([T, heads, dim], sequence b's rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1]); step i takes
row i of every sequence that has more than i tokens, so a call is as many steps as its longest
sequence has tokens, each a few batched tensor ops over [sequences, Hv, dk, dv]. Each step:

    q^, k^ = q_t / sqrt(sum q_t^2 + 1e-6), k_t / sqrt(sum k_t^2 + 1e-6)   (key head h // (Hv/Hk))
    S = exp(g_t) * S                 (gdn: one number a head; kda: row i of S times exp(g_t[i]))
    u = beta_t * (v_t - S^T k^)
    S = S + k^ u^T
    o_t = scale * S^T q^             (after the update, as the contract and FLA have it)

in float32 whatever the inputs' dtype (bf16 q, k, v are read exactly, widened). The states start
from the pool, state[state_indices[b]] ([slots, Hv, dk, dv], fp32 or bf16), are carried in
float32 through every token and written back once, in place, in the pool's dtype (index_copy_);
the other slots are not touched. o is returned in q's dtype. The call reads cu_seqlens_q on the
host (a synchronization, and the loop's length): it is a reference, not an engine's kernel.

Refused (supports): backward (an inference step: the pool is overwritten in place), fp8 inputs,
a state_dtype other than fp32 and bf16, value heads that are not a multiple of the key heads.
gdn_recurrent_decode and kda_recurrent_decode are the same at decode points only (1-4 tokens a
sequence; supports_<function>), for sweeps whose prefills run to 128k tokens.
"""
import torch

KINDS = ("gdn", "kda")
EPS = 1e-6  # inside the square root, as the models (and FLA's use_qk_l2norm_in_kernel) have it


def supports(problem):
    if getattr(problem, "direction", "fwd") != "fwd":
        return "forward only (an inference step: the state pool is overwritten in place)"
    dtype = getattr(problem, "dtype_name", None) or str(problem.dtype).replace("torch.", "")
    if problem.dtype not in (torch.bfloat16, torch.float16, torch.float32):
        return f"q, k, v in bf16, fp16 or fp32, not {dtype}"
    state_dtype = getattr(problem, "state_dtype", "fp32") or "fp32"
    if state_dtype not in ("fp32", "bf16"):
        return f"a state pool in fp32 or bf16, not {state_dtype}"
    # A GPU's heads (the model's linear_num_* divided by tp:): kv_heads the key heads, heads the
    # value heads (kda has no value-head field of its own).
    hk, hv = getattr(problem, "kv_heads", 0), getattr(problem, "heads", 0)
    if hk and hv and hv % hk:
        return f"value heads a multiple of the key heads, not {hv} over {hk}"
    return True


def _l2norm(x):
    """x [T, H, d] widened to float32, each head divided by sqrt(sum x^2 + 1e-6)."""
    x = x.float()
    return x * torch.rsqrt(x.square().sum(-1, keepdim=True) + EPS)


def _recurrent(q, k, v, g, beta, state, state_indices, cu_seqlens_q, scale):
    """The recurrence over the packed batch; kda when g is [T, Hv, dk], gdn when it is [T, Hv]."""
    tokens, hk, dk = q.shape
    hv, dv = v.size(1), v.size(2)
    if hv % hk:
        raise NotImplementedError(f"value heads a multiple of the key heads, not {hv} over {hk}")
    per_key = g.dim() == 3  # kda: a decay per key feature
    offsets = cu_seqlens_q.tolist()  # the host's copy: the loop's bounds
    batch = len(offsets) - 1
    starts = offsets[:-1]
    lens = [offsets[b + 1] - offsets[b] for b in range(batch)]
    device = q.device
    slots = state_indices.to(device=state.device, dtype=torch.long)
    o = torch.zeros(tokens, hv, dv, dtype=torch.float32, device=device)
    if batch == 0 or tokens == 0:
        return o.to(q.dtype)
    # The key heads' q^ and k^ once for every token, repeated to the value heads that read them.
    qn = _l2norm(q).repeat_interleave(hv // hk, dim=1)  # [T, Hv, dk]
    kn = _l2norm(k).repeat_interleave(hv // hk, dim=1)
    vf, gf, bf = v.float(), g.float(), beta.float()
    s = state.index_select(0, slots).to(device=device, dtype=torch.float32)  # [B, Hv, dk, dv]
    start_t = torch.tensor(starts, dtype=torch.long, device=device)
    for i in range(max(lens)):
        live = [b for b in range(batch) if lens[b] > i]
        if len(live) == batch:  # every sequence has a row i: no gather of states
            rows, seq = start_t + i, None
            cur = s
        else:
            seq = torch.tensor(live, dtype=torch.long, device=device)
            rows = start_t[seq] + i
            cur = s[seq]
        decay = gf[rows].exp()  # [n, Hv] or [n, Hv, dk]
        cur = cur * (decay[..., None] if per_key else decay[..., None, None])
        kt = kn[rows]  # [n, Hv, dk]
        u = bf[rows][..., None] * (vf[rows] - torch.einsum("nhkv,nhk->nhv", cur, kt))
        cur = cur + kt[..., :, None] * u[..., None, :]
        o[rows] = scale * torch.einsum("nhkv,nhk->nhv", cur, qn[rows])
        if seq is None:
            s = cur
        else:
            s[seq] = cur
    state.index_copy_(0, slots, s.to(device=state.device, dtype=state.dtype))
    return o.to(q.dtype)


def gdn_recurrent(q, k, v, g, beta, state, state_indices, cu_seqlens_q, scale):
    """gated delta-net, the PyTorch recurrent reference: a step a token, fp32 state"""
    return _recurrent(q, k, v, g, beta, state, state_indices, cu_seqlens_q, scale)


def kda_recurrent(q, k, v, g, beta, state, state_indices, cu_seqlens_q, scale):
    """Kimi delta attention, the PyTorch recurrent reference: a step a token, fp32 state"""
    return _recurrent(q, k, v, g, beta, state, state_indices, cu_seqlens_q, scale)


# The same recurrence offered at decode points only (1-4 tokens a sequence): the model presets
# (configs/models/) sweep prefills of up to 128k tokens, which this loop would take as many steps,
# seconds a call and minutes a point of harness time, where FLA's chunked kernels run them.
DECODE_MAX = 4


def _decode_only(problem):
    lens = list(getattr(problem, "q_lens", None) or [])
    longest = max(lens) if lens else int(getattr(problem, "seq_len", 0) or 0)
    if longest > DECODE_MAX:
        return (f"decode points only: at most {DECODE_MAX} tokens a sequence, not {longest} (one "
                "step a token; gdn_recurrent and kda_recurrent take any length)")
    return supports(problem)


def gdn_recurrent_decode(q, k, v, g, beta, state, state_indices, cu_seqlens_q, scale):
    """gated delta-net, the PyTorch recurrent reference at decode points (1-4 tokens a sequence)"""
    return _recurrent(q, k, v, g, beta, state, state_indices, cu_seqlens_q, scale)


def kda_recurrent_decode(q, k, v, g, beta, state, state_indices, cu_seqlens_q, scale):
    """Kimi delta attention, the PyTorch recurrent reference at decode points (1-4 tokens a sequence)"""
    return _recurrent(q, k, v, g, beta, state, state_indices, cu_seqlens_q, scale)


supports_gdn_recurrent_decode = _decode_only
supports_kda_recurrent_decode = _decode_only
gdn_recurrent.kinds = ("gdn",)
kda_recurrent.kinds = ("kda",)
gdn_recurrent_decode.kinds = ("gdn",)
kda_recurrent_decode.kinds = ("kda",)
