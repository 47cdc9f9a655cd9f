"""DeepSeek sparse attention (DSA: DeepSeek-V3.2, GLM-5) through FlashMLA's sparse prefill kernel,
for attnbench: absorbed MLA, each query row attending over its own top-k tokens of one latent cache
of 576 columns (512 latent, 64 rope), v its first 512.

What runs. The wheel sgl_flash_mla-1.0.0-cp310-abi3-manylinux2014_x86_64.whl (PyPI `sgl-flash-mla`
1.0.0, 9,866,492 bytes, sha256 95d2761376337af4568dbadedc1807b0d90e4d8383c63fa859518a34937392b3),
SGLang's packaging of deepseek-ai/FlashMLA. It installs the package `flash_mla` (import flash_mla):
pure Python around two libraries that register their ops through torch's stable ABI at load time
(torch.ops.load_library, no PyInit_): cuda.abi3.so (upstream's current kernels, sm100,
torch.ops.flash_mla) and _C_legacy.abi3.so (the kernels upstream dropped, sm90 among them,
torch.ops.flash_mla_legacy). `import flash_mla` needs torch and nothing else from Python (no
sgl_kernel, no triton); the libraries need libcudart.so.13 (torch's cu130 wheel loads it) and
libcuda.so.1 (the driver: on a machine without one the import raises OSError). Its metadata asks
for torch>=2.14.1; install it with --no-deps (`pip install --no-deps --no-index --target DIR
sgl_flash_mla-...whl`, DIR on PYTHONPATH): both libraries load and register under torch 2.11, as
they only call torch's stable C ABI (checked on a CPU machine with a stub libcuda.so.1; the
kernels themselves need the GPU).

Each call is one
    flash_mla.flash_mla_sparse_fwd(q, kv, indices, sm_scale, d_v=512, use_legacy=True,
                                   return_log2_lse=False)
i.e. torch.ops.flash_mla_legacy.sparse_prefill_fwd(q, kv, indices, sm_scale, 512, None, None,
False, False): q [s_q, h_q, 576] bf16, kv [s_kv, 1, 576] bf16, indices [s_q, 1, topk] int32 (rows
of kv; -1 or >= s_kv: not attended), out [s_q, h_q, 512] bf16 (return_log2_lse=False: no
max-logit and log-sum-exp outputs are allocated or written). The legacy kernels on every GPU:
they are the only ones for sm90, and upstream's current sm100 kernels take d_qk 512 alone.

What the call adds around the kernel, inside the timed call (an honest cost, a few small kernels,
no host synchronization, capturable in a CUDA graph):
  - the indices: attnbench's are token positions within each row's own sequence; FlashMLA's are
    rows of one flat cache. The cache is viewed as kv [slots, 1, 576] (no copy) and each entry
    mapped to its slot: paged page_table[b][t // page_size] * page_size + t % page_size, packed
    contiguous cu_seqlens_kv[b] + t, uniform b * seq_len_kv + t; -1 stays -1. Each row's sequence
    b comes from cu_seqlens_q by torch.repeat_interleave with output_size (no sync).
  - the heads: the sm90 kernel runs h_q = 64 or 128 only. Fewer query heads are padded with zero
    heads up to 64 (or 128 above 64), a copy of q per call, and the output sliced back: a point at
    16 heads pays the kernel's 64-head work plus the pad. The uniform layout's q
    [batch, heads, seq_len, 576] is transposed to rows in the same copy (none at seq_len 1 and 64
    or 128 heads).
Refused (supports): CPU points, backward, queries other than bf16, an fp8 cache (see supports),
head widths other than 576/512 with v 512, more than 128 heads, index_topk not a multiple of 128
(the sm90 kernel takes the list in pairs of 64-token blocks), GPUs other than sm90/sm100/sm103,
and a machine without the wheel (the reason says what to carry). Not run here on a GPU: the
index mapping and head padding are checked on the CPU by tests/flashmla_dsa_cpu_test.py against
a float64 stand-in for the kernel.
"""
import torch
import torch.nn.functional as F

KINDS = ("dsa",)
WHEEL = "sgl_flash_mla-1.0.0-cp310-abi3-manylinux2014_x86_64.whl"
_NOT_LOADED = object()
_flash_mla_module = _NOT_LOADED  # the module, or the exception its import raised
_capabilities = {}  # device index -> (major, minor)


def _flash_mla():
    """flash_mla, imported at first use (so this file imports where the wheel is not), or the
    exception its import raised."""
    global _flash_mla_module
    if _flash_mla_module is _NOT_LOADED:
        try:
            import flash_mla
            _flash_mla_module = flash_mla
        except Exception as e:  # ImportError; OSError where a library does not load (no driver)
            _flash_mla_module = e
    return _flash_mla_module


def _capability():
    """The current GPU's (major, minor), asked once a device."""
    device = torch.cuda.current_device()
    if device not in _capabilities:
        _capabilities[device] = torch.cuda.get_device_capability(device)
    return _capabilities[device]


def supports(problem):
    if problem.device != "cuda":
        return "FlashMLA's sparse prefill is a CUDA kernel: CUDA points only"
    if problem.direction != "fwd":
        return "forward only (FlashMLA's sparse prefill has no backward)"
    dtype = getattr(problem, "dtype_name", None) or str(problem.dtype).replace("torch.", "")
    if problem.dtype != torch.bfloat16:
        return f"bf16 queries only (FlashMLA's sparse prefill reads bf16 q and cache), not {dtype}"
    kv_dtype = getattr(problem, "kv_dtype", "") or ""
    if kv_dtype == "fp8_e4m3":
        return ("an fp8_e4m3 cache under one per-tensor scale: FlashMLA's sparse prefill reads a "
                "bf16 cache, and its sparse decode DeepSeek's own 656-byte fp8 token layout (512 "
                "e4m3 with one fp32 scale per 128 columns, then 64 bf16 rope), not this cache")
    if kv_dtype not in ("", "bf16"):
        return f"a bf16 cache only, not {kv_dtype}"
    d, dv = getattr(problem, "head_dim", 576) or 576, getattr(problem, "head_dim_v", 512) or 512
    if dv != 512 or d not in (576, 512):
        return f"head_dim 576 (or 512) and head_dim_v 512 (FlashMLA's sparse prefill), not {d}/{dv}"
    if problem.heads > 128:
        return (f"at most 128 query heads (the kernel runs 64 or 128; fewer are padded with zero "
                f"heads), not {problem.heads}")
    topk = int(getattr(problem, "index_topk", 2048))
    if topk % 128:
        return (f"index_topk a multiple of 128 (FlashMLA's sm90 sparse prefill takes the list in "
                f"pairs of 64-token blocks), not {topk}")
    fm = _flash_mla()
    if isinstance(fm, Exception):
        missing = isinstance(fm, ImportError)
        return (f"flash_mla {'not installed' if missing else 'does not load'}: carry "
                f"sgl-flash-mla 1.0.0 ({WHEEL}, pip install --no-deps, on PYTHONPATH) "
                f"({type(fm).__name__}: {str(fm).splitlines()[0] if str(fm) else ''})")
    major, minor = _capability()
    if (major, minor) != (9, 0) and major != 10:
        return f"FlashMLA's sparse prefill runs on sm90a and sm100f only, not sm_{major}{minor}"
    if not fm.has_legacy():
        return "this flash_mla was built without its legacy kernels (FLASH_MLA_BUILD_LEGACY=0)"
    return True


def cache_rows(indices, q, k, cu_seqlens_q=None, cu_seqlens_kv=None, page_table=None):
    """attnbench's indices (token positions in each row's own sequence, -1 padding) as rows of
    the flat cache k.view(-1, 1, d): [rows, 1, topk] int32, -1 kept. A few tensor ops on the
    indices' device, no host synchronization."""
    topk = indices.size(-1)
    t = indices.reshape(-1, topk).long()  # uniform [batch, seq_len, topk]: its rows in order
    rows, device = t.size(0), t.device
    if q.dim() == 4:  # uniform q [batch, heads, seq_len, d]: row r is sequence r // seq_len
        b = torch.arange(rows, device=device) // q.size(2)
    elif cu_seqlens_q is not None:
        lens = cu_seqlens_q[1:] - cu_seqlens_q[:-1]
        b = torch.repeat_interleave(torch.arange(lens.size(0), device=device), lens,
                                    output_size=rows)
    else:  # packed q, no offsets: as many queries in each sequence
        batch = (page_table.size(0) if page_table is not None else
                 cu_seqlens_kv.size(0) - 1 if cu_seqlens_kv is not None else k.size(0))
        b = torch.arange(rows, device=device) // max(rows // batch, 1)
    valid = t >= 0
    t = t.clamp_min(0)
    if page_table is not None:  # k [pages, page_size, 1, d]
        page_size, width = k.size(1), page_table.size(1)
        column = t // page_size
        valid &= column < width  # past the table: never read (no out-of-range gather)
        page = page_table.reshape(-1)[b.unsqueeze(1) * width + column.clamp_max(width - 1)]
        slot = page.long() * page_size + t % page_size
    elif cu_seqlens_kv is not None:  # k [total_kv, 1, d]
        slot = cu_seqlens_kv.long()[b].unsqueeze(1) + t
    else:  # k [batch, 1, seq_len_kv, d]
        slot = b.unsqueeze(1) * k.size(2) + t
    return torch.where(valid, slot, -1).to(torch.int32).unsqueeze(1)


def dsa_attention(q, k, v, indices, scale, cu_seqlens_q=None, cu_seqlens_kv=None, page_table=None,
                  k_scale=1.0, v_scale=1.0, problem=None):
    """FlashMLA's sparse prefill (sgl-flash-mla 1.0.0), q zero-padded to 64/128 heads per call

    DSA over a paged, packed or contiguous bf16 cache: attnbench's per-sequence indices mapped to
    rows of the flat cache in the call (a few small kernels), q padded with zero heads up to 64 or
    128 (a copy each call) and the output sliced back; see the module docstring.
    k_scale and v_scale are taken only so that supports() gets to say why an fp8 cache is refused
    (a function without them is refused by the harness with a generic reason); they are unused."""
    del v, k_scale, v_scale, problem  # v is k's first 512 columns; an fp8 cache never gets here
    fm = _flash_mla()
    if isinstance(fm, Exception):
        raise NotImplementedError(f"flash_mla not importable ({type(fm).__name__}: {fm}): "
                                  f"carry {WHEEL}")
    d, dv = q.size(-1), 512
    heads = q.size(1)
    if heads > 128:
        raise NotImplementedError(f"at most 128 query heads, not {heads}")
    if indices.size(-1) % 128:
        raise NotImplementedError(f"index_topk a multiple of 128, not {indices.size(-1)}")
    try:
        kv = k.view(-1, 1, d)  # every cache row, flat: the slots cache_rows() numbers
    except RuntimeError as e:
        raise NotImplementedError(f"a cache that views as [slots, 1, {d}] without a copy ({e})")
    rows_idx = cache_rows(indices, q, k, cu_seqlens_q, cu_seqlens_kv, page_table)
    padded = 64 if heads <= 64 else 128
    uniform = q.dim() == 4
    qr = q.transpose(1, 2) if uniform else q  # [batch, seq_len, heads, d] or [rows, heads, d]
    if padded != heads:
        qr = F.pad(qr, (0, 0, 0, padded - heads))  # the zero heads: one copy
    qr = qr.reshape(-1, padded, d)  # uniform: rows; a copy only where not a view already
    if qr.stride(-1) != 1 or qr.stride(1) != d:  # the kernel's q: [s_q, h_q, d], heads dense
        qr = qr.contiguous()
    out = fm.flash_mla_sparse_fwd(qr, kv, rows_idx, float(scale), d_v=dv, use_legacy=True,
                                  return_log2_lse=False)[0]
    out = out[:, :heads]  # [rows, heads, 512]: a view
    if uniform:
        batch, seq_len = q.size(0), q.size(2)
        return out.view(batch, seq_len, heads, dv).transpose(1, 2)  # a view too
    return out
