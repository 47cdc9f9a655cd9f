"""examples/python-backends/flashmla_dsa.py on the CPU, without the wheel or a GPU: a stand-in
`flash_mla` module whose flash_mla_sparse_fwd is a float64 version of the kernel's contract
(q [s_q, h_q, d] bf16 with h_q 64 or 128 and its heads dense, kv [s_kv, 1, d] bf16, indices
[s_q, 1, topk] int32 with topk a multiple of 128, each entry a row of kv, -1 or >= s_kv not
attended; softmax(scale q.k) over the attended rows times their first 512 columns, zeros where
none; every head, the padded ones included), so that what the backend does around the kernel is
checked: the mapping of attnbench's indices (positions in each row's own sequence) to rows of the
flat cache, and the zero-head padding. Against an independent float64 reference that works in
logical positions per sequence: a paged cache of shuffled pages of 1 and 64 tokens (with unused
pages and a table wider than needed), a packed contiguous cache, the uniform layout (1 and 2
queries, where q is a view and where it is transposed by a copy), 1 and 2 queries a sequence,
heads 16 (padded to 64), 64, 100 (padded to 128) and 128, -1 padding and a row that selects
nothing, topk 128 and 256. Also: the cache reaches the kernel as a view of k (no copy), the inputs
are left as they were, planted mistakes (a wrong page table, the indices one token off, the
sequence offsets dropped) are caught, and what supports() refuses, and why.
Usage: python3 tests/flashmla_dsa_cpu_test.py [examples/python-backends]; exits 1 on a failure."""
import math
import os
import sys
import time
import types

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "examples",
                                                                       "python-backends"))
import flashmla_dsa  # noqa: E402  (imports without flash_mla: it is imported at first use)

D, DV = 576, 512
SCALE = 192 ** -0.5
TOLERANCE = 1e-2  # per (row, head), relative to float64: the kernel stand-in rounds to bf16 once
failures = []
started = time.time()


def check(ok, what):
    if not ok:
        failures.append(what)


# --- The stand-in kernel: the contract of flash_mla_sparse_fwd(use_legacy=True) on sm90. ------
calls = []  # what each call got: (q, kv, indices)


def fake_sparse_fwd(q, kv, indices, sm_scale, d_v=512, attn_sink=None, topk_length=None,
                    use_legacy=False, return_log2_lse=None):
    assert use_legacy is True and return_log2_lse is False, (use_legacy, return_log2_lse)
    assert attn_sink is None and topk_length is None and d_v == 512
    assert q.dtype == torch.bfloat16 and kv.dtype == torch.bfloat16 and indices.dtype == torch.int32
    assert q.dim() == 3 and kv.dim() == 3 and indices.dim() == 3
    s_q, h_q, d = q.shape
    assert h_q in (64, 128), f"h_q {h_q}"
    assert d in (576, 512) and kv.size(2) == d and kv.size(1) == 1
    assert q.stride(-1) == 1 and q.stride(1) == d, f"q strides {q.stride()}"  # the kernel's check
    assert kv.stride(-1) == 1 and indices.stride(-1) == 1
    topk = indices.size(2)
    assert indices.shape == (s_q, 1, topk) and topk % 128 == 0, tuple(indices.shape)
    calls.append((q, kv, indices))
    s_kv = kv.size(0)
    idx = indices[:, 0].long()
    valid = (idx >= 0) & (idx < s_kv)
    keys = kv[:, 0].double()[idx.clamp(0, s_kv - 1)]  # [s_q, topk, d]
    scores = torch.einsum("shd,std->sht", q.double(), keys) * sm_scale
    scores = scores.masked_fill(~valid[:, None, :], -math.inf)
    p = torch.softmax(scores, -1).nan_to_num(0.0)  # a row that attends nothing: zeros
    out = torch.einsum("sht,std->shd", p, keys[..., :d_v])
    return out.to(torch.bfloat16), None, None


def install_fake(has_legacy=True):
    fake = types.ModuleType("flash_mla")
    fake.flash_mla_sparse_fwd = fake_sparse_fwd
    fake.has_legacy = lambda: has_legacy
    sys.modules["flash_mla"] = fake
    flashmla_dsa._flash_mla_module = flashmla_dsa._NOT_LOADED


# --- Inputs per sequence, the reference in logical positions, the layouts. --------------------
def choose(pos, topk, gen, fewer=0):
    """Distinct tokens of 0..pos in random order, min(topk, pos + 1) - fewer of them, then -1."""
    n = max(0, min(topk, pos + 1) - fewer)
    tokens = torch.randperm(pos + 1, generator=gen)[:n]
    return torch.cat([tokens, torch.full((topk - n,), -1, dtype=torch.int64)]).to(torch.int32)


def inputs(q_lens, kv_lens, topk, heads, fewer=(), empty=(), seed=0):
    gen = torch.Generator().manual_seed(seed)
    qs = [torch.randn(n, heads, D, generator=gen).to(torch.bfloat16) for n in q_lens]
    ks = [torch.randn(n, D, generator=gen).to(torch.bfloat16) for n in kv_lens]
    idx, row = [], 0
    for s, s_kv in zip(q_lens, kv_lens):
        lists = []
        for i in range(s):
            pos = i + s_kv - s  # bottom-right
            lists.append(torch.full((topk,), -1, dtype=torch.int32) if row in empty else
                         choose(pos, topk, gen, fewer=3 if row in fewer else 0))
            row += 1
        idx.append(torch.stack(lists))
    return qs, ks, idx


def reference(qs, ks, idx):
    """float64, a row at a time, each sequence's own tokens by position: [q_len, heads, DV]."""
    outs = []
    for q, k, rows in zip(qs, ks, idx):
        q, k = q.double(), k.double()
        out = torch.zeros(q.size(0), q.size(1), DV, dtype=torch.float64)
        for i, row in enumerate(rows):
            keys = k[row[row >= 0].long()]
            if keys.size(0):
                out[i] = torch.softmax(SCALE * q[i] @ keys.T, -1) @ keys[:, :DV]
        outs.append(out)
    return outs


def offsets(lens):
    return torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32)


def scattered_pages(ks, page, gen):
    """Pages of `page` tokens in a random order, 3 unused, a table 2 columns wider than needed."""
    counts = [math.ceil(k.size(0) / page) for k in ks]
    order = torch.randperm(sum(counts) + 3, generator=gen)
    cache = torch.randn(len(order), page, 1, D, generator=gen).to(torch.bfloat16)  # noise unused
    table = torch.zeros(len(ks), max(counts) + 2, dtype=torch.int32)
    used = 0
    for b, k in enumerate(ks):
        for j in range(counts[b]):
            at = int(order[used])
            used += 1
            table[b, j] = at
            rows = k[j * page: (j + 1) * page]
            cache[at, : rows.size(0), 0] = rows
    return cache, table


def layout(qs, ks, idx, kind, page=16, seed=1):
    """The backend's arguments: (q, k, indices, keywords)."""
    if kind == "uniform":
        q = torch.stack(qs).transpose(1, 2).contiguous()  # [batch, heads, seq_len, D]
        k = torch.stack(ks).unsqueeze(1).contiguous()  # [batch, 1, seq_len_kv, D]
        return q, k, torch.stack(idx), {}
    q, flat = torch.cat(qs), torch.cat(idx)
    q_lens, kv_lens = [x.size(0) for x in qs], [x.size(0) for x in ks]
    if kind == "paged":
        k, table = scattered_pages(ks, page, torch.Generator().manual_seed(seed))
        return q, k, flat, dict(cu_seqlens_q=offsets(q_lens), page_table=table)
    # packed contiguous, a few unused rows at the end
    k = torch.cat(ks + [torch.randn(5, D).to(torch.bfloat16)]).unsqueeze(1).contiguous()
    return q, k, flat, dict(cu_seqlens_q=offsets(q_lens), cu_seqlens_kv=offsets(kv_lens))


def run(q, k, indices, kw):
    out = flashmla_dsa.dsa_attention(q, k, k[..., :DV], indices, SCALE, **kw)
    return out


def per_sequence(out, qs, kind):
    if kind == "uniform":  # [batch, heads, seq_len, DV]
        return [out[b].transpose(0, 1) for b in range(out.size(0))]
    return list(out.split([x.size(0) for x in qs]))


def error(got, want):
    worst = 0.0
    for g, w in zip(got, want):
        g = g.double()
        if g.shape != w.shape or not torch.isfinite(g).all():
            return math.inf
        norm = w.norm(dim=-1)
        zero = norm == 0
        if (g[zero] != 0).any():
            return math.inf
        if (~zero).any():
            worst = max(worst, ((g - w).norm(dim=-1)[~zero] / norm[~zero]).max().item())
    return worst


CASES = {  # q_lens, kv_lens, topk, heads; layout and page
    "paged page 1, decode, heads 16": dict(q_lens=[1, 1, 1], kv_lens=[300, 40, 129], topk=128,
                                           heads=16, kind="paged", page=1),
    "paged page 64, 2 queries, heads 16": dict(q_lens=[2, 2], kv_lens=[200, 77], topk=128,
                                               heads=16, kind="paged", page=64),
    "paged page 64, mixed 1/2 queries, topk 256": dict(q_lens=[1, 2, 1], kv_lens=[400, 130, 64],
                                                       topk=256, heads=16, kind="paged", page=64),
    "paged page 1, heads 128, 2 queries": dict(q_lens=[2, 1], kv_lens=[150, 90], topk=128,
                                               heads=128, kind="paged", page=1),
    "paged page 64, prefill, -1 padding, an empty row": dict(
        q_lens=[10, 6], kv_lens=[10, 46], topk=128, heads=16, kind="paged", page=64,
        fewer=(9, 12), empty=(4,)),
    "packed contiguous, 1 and 2 queries, heads 16": dict(q_lens=[1, 2, 1], kv_lens=[100, 190, 33],
                                                         topk=128, heads=16, kind="packed"),
    "packed contiguous, heads 100 (padded to 128)": dict(q_lens=[2, 1], kv_lens=[140, 60],
                                                         topk=128, heads=100, kind="packed",
                                                         empty=(2,)),
    "uniform decode, heads 16": dict(q_lens=[1, 1], kv_lens=[150, 150], topk=128, heads=16,
                                     kind="uniform"),
    "uniform decode, heads 64 (q passed as a view)": dict(q_lens=[1, 1, 1], kv_lens=[90] * 3,
                                                          topk=128, heads=64, kind="uniform"),
    "uniform 2 queries, heads 16": dict(q_lens=[2, 2], kv_lens=[140, 140], topk=128, heads=16,
                                        kind="uniform", fewer=(1,)),
    "uniform 2 queries, heads 64 (transposed by a copy)": dict(q_lens=[2, 2], kv_lens=[70, 70],
                                                               topk=128, heads=64, kind="uniform"),
}

install_fake()
for name, case in CASES.items():
    case = dict(case)
    kind, page, heads = case.pop("kind"), case.pop("page", 16), case["heads"]
    qs, ks, idx = inputs(**case)
    want = reference(qs, ks, idx)
    q, k, indices, kw = layout(qs, ks, idx, kind, page)
    before = {"q": q.clone(), "k": k.clone(), "indices": indices.clone(),
              **{key: t.clone() for key, t in kw.items()}}
    calls.clear()
    try:
        out = run(q, k, indices, kw)
    except Exception as e:  # noqa: BLE001  (a failure of this case, named)
        failures.append(f"{name}: {type(e).__name__}: {e}")
        continue
    rows = sum(case["q_lens"])
    shape = ((len(qs), heads, case["q_lens"][0], DV) if kind == "uniform" else (rows, heads, DV))
    check(tuple(out.shape) == shape and out.dtype == torch.bfloat16,
          f"{name}: output {tuple(out.shape)} {out.dtype}, want {shape} bf16")
    err = error(per_sequence(out, qs, kind), want)
    print(f"{name:56s} {err:.2e}", flush=True)
    check(err < TOLERANCE, f"{name}: error {err:.3g} above {TOLERANCE}")
    # What the kernel got: one call, the cache as a view of k, the heads padded with zeros.
    check(len(calls) == 1, f"{name}: {len(calls)} kernel calls")
    if calls:
        kq, kv, _ = calls[0]
        check(kv.data_ptr() == k.data_ptr() and kv.shape == (k.numel() // D, 1, D),
              f"{name}: the cache reached the kernel as {tuple(kv.shape)}, not a view of k")
        padded = 64 if heads <= 64 else 128
        check(kq.size(1) == padded, f"{name}: h_q {kq.size(1)}, want {padded}")
        check(bool((kq[:, heads:] == 0).all()), f"{name}: padded heads not zero")
        if kind == "uniform" and heads == padded and case["q_lens"][0] == 1:
            check(kq.data_ptr() == q.data_ptr(), f"{name}: q copied where a view serves")
    for key, t in {"q": q, "k": k, "indices": indices, **kw}.items():
        check(torch.equal(t, before[key]), f"{name}: the backend changed its input {key}")

# --- The comparison is sharp: planted mistakes differ far beyond the tolerance. ---------------
qs, ks, idx = inputs([1, 2, 1], [200, 150, 130], 128, 16, seed=3)
want = reference(qs, ks, idx)
q, k, indices, kw = layout(qs, ks, idx, "paged", 64)
wrong = dict(kw, page_table=kw["page_table"][[1, 2, 0]])  # each sequence reads another's pages
err = error(per_sequence(run(q, k, indices, wrong), qs, "paged"), want)
check(err > 0.1, f"planted: a wrong page table gives error {err:.3g}, not caught")
late = torch.where(indices >= 0, indices + 1, indices)  # every index one token late
late = torch.minimum(late, torch.tensor(129))  # within every sequence's tokens
err = error(per_sequence(run(q, k, late, kw), qs, "paged"), want)
check(err > 0.1, f"planted: indices one token late give error {err:.3g}, not caught")
q, k, indices, kw = layout(qs, ks, idx, "packed")
flat = dict(kw, cu_seqlens_kv=torch.zeros_like(kw["cu_seqlens_kv"]))  # offsets dropped
err = error(per_sequence(run(q, k, indices, flat), qs, "packed"), want)
check(err > 0.1, f"planted: the packed cache's offsets dropped give error {err:.3g}, not caught")

# The mapping alone, by hand: page size 4, table [[5, 2], [0, 7]], two rows of sequence 1.
got = flashmla_dsa.cache_rows(torch.tensor([[0, 5, -1, 3], [7, -1, -1, 4]], dtype=torch.int32),
                              torch.zeros(2, 16, D), torch.zeros(8, 4, 1, D),
                              cu_seqlens_q=torch.tensor([0, 0, 2], dtype=torch.int32),
                              page_table=torch.tensor([[5, 2], [0, 7]], dtype=torch.int32))
want_rows = torch.tensor([[[0, 29, -1, 3]], [[31, -1, -1, 28]]], dtype=torch.int32)
check(torch.equal(got, want_rows), f"cache_rows by hand: {got.tolist()}, want {want_rows.tolist()}")
got = flashmla_dsa.cache_rows(torch.tensor([[8, 0]], dtype=torch.int32), torch.zeros(1, 16, D),
                              torch.zeros(8, 4, 1, D), cu_seqlens_q=torch.tensor([0, 1]),
                              page_table=torch.tensor([[5, 2]], dtype=torch.int32))
check(got.tolist() == [[[-1, 20]]], f"a position past the page table: {got.tolist()}, want -1")

# --- supports(): what it refuses, and why. ---------------------------------------------------
base = dict(device="cuda", direction="fwd", dtype=torch.bfloat16, dtype_name="bf16", kv_dtype="",
            heads=16, head_dim=576, head_dim_v=512, kv_layout="paged", packed=True, seq_len=1,
            index_topk=2048)
flashmla_dsa._capability = lambda: (9, 0)
install_fake()
for changed, want_answer in [
        ({}, True), ({"heads": 128}, True), ({"heads": 1}, True), ({"index_topk": 128}, True),
        ({"head_dim": 512}, True), ({"kv_dtype": "bf16"}, True),
        ({"device": "cpu"}, "CUDA points only"),
        ({"direction": "bwd"}, "forward only"),
        ({"dtype": torch.float16, "dtype_name": "fp16"}, "not fp16"),
        ({"dtype": torch.float8_e4m3fn, "dtype_name": "fp8_e4m3"}, "not fp8_e4m3"),
        ({"kv_dtype": "fp8_e4m3"}, "656-byte"),
        ({"heads": 129}, "at most 128"),
        ({"index_topk": 2000}, "multiple of 128"), ({"index_topk": 64}, "multiple of 128"),
        ({"head_dim": 192, "head_dim_v": 128}, "not 192/128")]:
    got = flashmla_dsa.supports(types.SimpleNamespace(**{**base, **changed}))
    ok = got is True if want_answer is True else isinstance(got, str) and want_answer in got
    check(ok, f"supports with {changed}: {got!r}, want {want_answer!r}")
for capability, want_answer in [((10, 0), True), ((10, 3), True), ((8, 0), "not sm_80"),
                                ((12, 0), "not sm_120")]:
    flashmla_dsa._capability = lambda c=capability: c
    got = flashmla_dsa.supports(types.SimpleNamespace(**base))
    ok = got is True if want_answer is True else isinstance(got, str) and want_answer in got
    check(ok, f"supports on sm_{capability[0]}{capability[1]}: {got!r}, want {want_answer!r}")
flashmla_dsa._capability = lambda: (9, 0)
install_fake(has_legacy=False)
got = flashmla_dsa.supports(types.SimpleNamespace(**base))
check(isinstance(got, str) and "legacy" in got, f"a flash_mla without legacy kernels: {got!r}")
# No wheel: sys.modules[name] = None makes `import flash_mla` raise ImportError.
sys.modules["flash_mla"] = None
flashmla_dsa._flash_mla_module = flashmla_dsa._NOT_LOADED
got = flashmla_dsa.supports(types.SimpleNamespace(**base))
check(isinstance(got, str) and got.startswith("flash_mla not installed: carry sgl-flash-mla")
      and flashmla_dsa.WHEEL in got, f"no flash_mla: {got!r}")
try:
    run(*layout(*inputs([1], [130], 128, 16), "packed"))
    failures.append("no flash_mla: the call did not raise")
except NotImplementedError as e:  # the harness's `unsupported`, with the reason
    check("carry" in str(e), f"no flash_mla: the call says {e}")
flashmla_dsa._flash_mla_module = OSError("libcuda.so.1: cannot open shared object file")
got = flashmla_dsa.supports(types.SimpleNamespace(**base))
check(isinstance(got, str) and "does not load" in got and "libcuda" in got,
      f"a flash_mla whose library does not load: {got!r}")
check(flashmla_dsa.KINDS == ("dsa",), f"KINDS {flashmla_dsa.KINDS!r}")
doc = flashmla_dsa.dsa_attention.__doc__.strip().splitlines()[0]
check("padded" in doc and "64/128" in doc, f"the first docstring line omits the padding: {doc}")

print(f"{time.time() - started:.1f} s")
print("\n".join(failures) or "all match")
sys.exit(1 if failures else 0)
