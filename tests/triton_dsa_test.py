"""examples/python-backends/triton_dsa.py (DeepSeek sparse attention) against float64, on the CPU
through Triton's interpreter (TRITON_INTERPRET=1): the packed layout over a paged cache (pages of
1, 16 and 64 tokens, shuffled) and a contiguous one, the uniform layout, bf16 and fp16 queries, an
fp8_e4m3 cache under its scale, 1 and 2 queries a sequence (each with its own list), prefills
whose early rows choose fewer tokens than topk (-1 padding), lists in no order that hold token 0
and the query's own position, a row that chooses nothing, 16 to 128 heads (one and two tiles of
heads, and a tile's padding); each once finished in one program and once split in three with the
merge kernel. The float64 reference is this file's own: each row's chosen cache rows gathered,
softmax, the first 512 columns as values. Planted bugs show it is sharp enough: attention over
every visible token, the indices off by one and an fp8 cache read without its scale all differ
from it far beyond the tolerance. Usage: TRITON_INTERPRET=1 python3 tests/triton_dsa_test.py
[examples/python-backends]; exits 77 (skipped) without Triton."""
import math
import os
import sys
import time
import types

os.environ["TRITON_INTERPRET"] = "1"
import torch  # noqa: E402

try:
    import triton  # noqa: F401,E402
except ImportError:
    print("no triton: skipped")
    sys.exit(77)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "examples",
                                                                       "python-backends"))
import triton_dsa  # noqa: E402

D, DV = 576, 512  # kv_lora_rank 512 + rope 64; v is the first 512 columns
SCALE = 192 ** -0.5  # DeepSeek's (qk_nope 128 + rope 64), not 576's: the scale given is used
TOLERANCE = {torch.bfloat16: 1e-2, torch.float16: 2e-3}  # per row, relative to float64
triton_dsa._sms = lambda device: 4  # no GPU to ask


def choose(pos, topk, gen, fewer=0, ends=False):
    """A row's list: distinct tokens of 0..pos in a random order, `fewer` short of what it can
    hold (min(topk, pos + 1)), token 0 and `pos` among them when `ends`, then -1 padding."""
    n = max(0, min(topk, pos + 1) - fewer)
    tokens = torch.randperm(pos + 1, generator=gen)[:n]
    if ends and n >= 2 and pos > 0:
        rest = tokens[(tokens != 0) & (tokens != pos)][: n - 2]
        tokens = torch.cat([rest, torch.tensor([0, pos])])[torch.randperm(n, generator=gen)]
    return torch.cat([tokens, torch.full((topk - n,), -1, dtype=torch.int64)]).to(torch.int32)


def reference(qs, ks, idx, scale):
    """float64, row by row: qs per sequence [q_len, heads, D], ks per sequence [kv_len, D]
    (dequantized), idx per sequence [q_len, topk]. Returns per sequence [q_len, heads, DV]."""
    outs = []
    for q, k, rows in zip(qs, ks, idx):
        q, k = q.double(), k.double()
        out = torch.zeros(q.size(0), q.size(1), DV, dtype=torch.float64)
        for i, row in enumerate(rows):
            keys = k[row[row >= 0].long()]  # the chosen cache rows, in the list's order
            if keys.size(0):
                p = torch.softmax(scale * q[i] @ keys.T, -1)  # [heads, chosen]
                out[i] = p @ keys[:, :DV]
        outs.append(out)
    return outs


def scattered_pages(ks, page):
    """The cache as pages of `page` tokens in a random order, three pages unused, and its table."""
    counts = [math.ceil(k.size(0) / page) for k in ks]
    order = torch.randperm(sum(counts) + 3)
    cache = torch.zeros(len(order), page, 1, D).to(ks[0].dtype)
    table = torch.zeros(len(ks), max(counts), dtype=torch.int32)
    used = 0
    for b, k in enumerate(ks):
        for j in range(counts[b]):
            at = int(order[used])
            used += 1
            table[b, j] = at
            rows = k[j * page: (j + 1) * page]
            cache[at, : rows.size(0), 0] = rows
    return cache, table


def offsets(lens):
    return torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32)


def inputs(q_lens, kv_lens, topk, heads=16, dtype=torch.bfloat16, fp8=False, fewer=(),
           empty=(), seed=0):
    """Per sequence: q [q_len, heads, D] in dtype, the cache [kv_len, D] as stored, its dequantized
    rows (float32), the lists [q_len, topk] (rows of the flat row numbers in `fewer` choose 3
    tokens fewer than they could, those in `empty` none), and k_scale."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    qs = [torch.randn(n, heads, D, generator=gen).to(dtype) for n in q_lens]
    kf = [torch.randn(n, D, generator=gen) for n in kv_lens]
    k_scale = 1.0
    if fp8:  # one scale for the cache, its largest magnitude at e4m3's 448 (as the harness does)
        k_scale = max(k.abs().max().item() for k in kf) / 448
        ks = [(k / k_scale).to(torch.float8_e4m3fn) for k in kf]
    else:
        ks = [k.to(dtype) for k in kf]
    idx, row = [], 0
    for s, s_kv in zip(q_lens, kv_lens):
        lists = []
        for i in range(s):
            pos = i + s_kv - s  # bottom-right: the last query stands at the last key
            lists.append(torch.full((topk,), -1, dtype=torch.int32) if row in empty else
                         choose(pos, topk, gen, fewer=3 if row in fewer else 0, ends=i % 2 == 0))
            row += 1
        idx.append(torch.stack(lists))
    return qs, ks, [k.float() * k_scale for k in ks], idx, k_scale


def run(qs, ks, idx, k_scale, layout="paged", page=16, heads=16):
    """The kernel's rows, per sequence [q_len, heads, DV]."""
    q_lens, kv_lens = [q.size(0) for q in qs], [k.size(0) for k in ks]
    if layout == "uniform":  # q [batch, heads, seq, D], k [batch, 1, seq_kv, D], idx [batch, seq, topk]
        q = torch.stack(qs).transpose(1, 2).contiguous()
        k = torch.stack(ks).unsqueeze(1).contiguous()
        out = triton_dsa.dsa_attention(q, k, k[..., :DV], torch.stack(idx), SCALE, k_scale=k_scale,
                                       v_scale=k_scale)
        return [out[b].transpose(0, 1) for b in range(len(qs))]
    q, flat = torch.cat(qs), torch.cat(idx)
    if layout == "paged":
        k, table = scattered_pages(ks, page)
        out = triton_dsa.dsa_attention(q, k, k[..., :DV], flat, SCALE, cu_seqlens_q=offsets(q_lens),
                                       kv_lens=torch.tensor(kv_lens, dtype=torch.int32),
                                       page_table=table, k_scale=k_scale, v_scale=k_scale)
    else:  # packed contiguous: [total_kv, 1, D]
        k = torch.cat(ks).unsqueeze(1).contiguous()
        out = triton_dsa.dsa_attention(q, k, k[..., :DV], flat, SCALE, cu_seqlens_q=offsets(q_lens),
                                       cu_seqlens_kv=offsets(kv_lens), k_scale=k_scale,
                                       v_scale=k_scale)
    if out.shape != (sum(q_lens), heads, DV) or out.dtype != q.dtype:
        raise AssertionError(f"output {tuple(out.shape)} {out.dtype}, want {(sum(q_lens), heads, DV)}")
    return list(out.split(q_lens))


def error(got, want):
    """The largest relative error of a row (one query, one head) of got against want; a row that
    should be zeros must be exactly zeros."""
    worst = 0.0
    for g, w in zip(got, want):
        g = g.double()
        if not torch.isfinite(g).all():
            return float("inf")
        norm = w.norm(dim=-1)
        zero = norm == 0
        if (g[zero] != 0).any():
            return float("inf")
        if (~zero).any():
            worst = max(worst, ((g - w).norm(dim=-1)[~zero] / norm[~zero]).max().item())
    return worst


CASES = {  # q_lens, kv_lens, topk, and the rest
    "paged page 1, decode, bf16": dict(q_lens=[1, 1, 1], kv_lens=[300, 40, 129], topk=64, page=1),
    "paged page 16, 2 queries, bf16": dict(q_lens=[2, 2], kv_lens=[200, 77], topk=64, page=16),
    "paged page 64, 2 queries, fp16": dict(q_lens=[2, 1], kv_lens=[300, 150], topk=64, page=64,
                                           dtype=torch.float16),
    "packed contiguous, bf16": dict(q_lens=[1, 2, 1], kv_lens=[100, 90, 33], topk=64,
                                    layout="packed"),
    "uniform decode, bf16": dict(q_lens=[1, 1], kv_lens=[120, 120], topk=64, layout="uniform"),
    "uniform 2 queries, fp16": dict(q_lens=[2, 2], kv_lens=[90, 90], topk=32, layout="uniform",
                                    dtype=torch.float16),
    "fp8 cache, bf16 q, paged 16": dict(q_lens=[1, 2], kv_lens=[200, 60], topk=64, fp8=True),
    "fp8 cache, fp16 q, packed": dict(q_lens=[2, 1], kv_lens=[70, 200], topk=64, fp8=True,
                                      dtype=torch.float16, layout="packed"),
    # A prefill from an empty cache (rows 0..9 see 1..10 tokens, topk 8) and a chunk of one on 40
    # cached tokens; a few rows choose fewer than they could, one chooses nothing.
    "prefill, -1 padding, paged 16": dict(q_lens=[10, 6], kv_lens=[10, 46], topk=8,
                                          fewer=(9, 12), empty=(4,)),
    "prefill, uniform, fp16": dict(q_lens=[6, 6], kv_lens=[20, 20], topk=16, layout="uniform",
                                   dtype=torch.float16, fewer=(2, 7)),
    "a decode that chooses nothing, packed": dict(q_lens=[1, 1], kv_lens=[50, 60], topk=32,
                                                  layout="packed", empty=(1,)),
    "heads 128 (two tiles of 64), paged 64": dict(q_lens=[1, 2], kv_lens=[150, 100], topk=64,
                                                  heads=128, page=64),
    "heads 128, fp8 cache, page 1": dict(q_lens=[1], kv_lens=[130], topk=64, heads=128, page=1,
                                         fp8=True),
    "heads 24 (a tile of 32, 8 rows padding)": dict(q_lens=[1, 1], kv_lens=[80, 80], topk=32,
                                                     heads=24, layout="packed"),
}

started = time.time()
failures = []
chosen_splits = triton_dsa._splits
for name, case in CASES.items():
    case = dict(case)
    layout, page = case.pop("layout", "paged"), case.pop("page", 16)
    dtype, heads = case.get("dtype", torch.bfloat16), case.get("heads", 16)
    qs, ks, kd, idx, k_scale = inputs(**case)
    want = reference(qs, kd, idx, SCALE)
    for splits in (None, 3):
        triton_dsa._splits = chosen_splits if splits is None else (lambda *a: splits)
        err = error(run(qs, ks, idx, k_scale, layout, page, heads), want)
        label = f"{name} ({'split in 3' if splits else 'as chosen'})"
        print(f"{label:60s} {err:.2e}", flush=True)
        if not err < TOLERANCE[dtype]:
            failures.append(f"{label}: error {err:.3g} above {TOLERANCE[dtype]}")
    triton_dsa._splits = chosen_splits
    # An fp8 cache read as if its scale were 1: the kernel's output must be far off.
    if case.get("fp8"):
        wrong = error(run(qs, ks, idx, 1.0, layout, page, heads), want)
        print(f"{'  the same with k_scale 1 (must fail)':60s} {wrong:.2e}")
        if not wrong > 10 * TOLERANCE[dtype]:
            failures.append(f"{name}: k_scale 1 instead of {k_scale:.3g} gives {wrong:.3g}, not caught")

# The reference is sharp: the planted bugs a kernel could make move it far beyond the tolerance.
# (a) every visible token (0..pos) instead of the list; (b) each index off by one.
qs, ks, kd, idx, _ = inputs([1, 2, 1], [300, 200, 90], 64)
want = reference(qs, kd, idx, SCALE)
every = [torch.stack([torch.cat([torch.arange(i + k.size(0) - q.size(0) + 1),
                                 torch.full((k.size(0),), -1)])[: k.size(0)]
                      for i in range(q.size(0))]).to(torch.int32) for q, k in zip(qs, kd)]
shifted = [torch.where(r > 0, r - 1, torch.where(r == 0, 1, r)) for r in idx]
for label, bad in (("all visible tokens, indices ignored", every), ("indices off by one", shifted)):
    gap = error(reference(qs, kd, bad, SCALE), want)
    print(f"{'planted: ' + label:60s} {gap:.2e}")
    if not gap > 10 * TOLERANCE[torch.bfloat16]:
        failures.append(f"the reference with {label} is only {gap:.3g} from the right one")

# The splits chosen: one program a row where the rows fill the GPU, more for a small decode.
triton_dsa._sms = lambda device: 132
for args, want_splits in [((32, 2048, 32, 2), 8), ((32, 2048, 32, 1), 4), ((128, 2048, 32, 2), 2),
                          ((1, 2048, 32, 1), 8), ((4096, 2048, 32, 2), 1), ((1, 64, 32, 2), 1)]:
    got = chosen_splits(*args, "cpu")
    if got != want_splits:
        failures.append(f"splits for (programs, topk, BLOCK_N, resident) {args}: {got}, not {want_splits}")
triton_dsa._sms = lambda device: 4

# What it refuses, and what it takes.
base = dict(device="cuda", direction="fwd", dtype=torch.bfloat16, dtype_name="bf16", kv_dtype="",
            heads=16, head_dim=576, head_dim_v=512, kv_layout="paged", packed=True)
for changed, want_answer in [({}, True), ({"dtype": torch.float16, "dtype_name": "fp16"}, True),
                             ({"kv_dtype": "fp8_e4m3"}, True),
                             ({"direction": "bwd"}, "forward only"),
                             ({"dtype": torch.float32, "dtype_name": "fp32"}, "not fp32"),
                             ({"kv_dtype": "fp8_e5m2"}, "not fp8_e5m2"),
                             ({"head_dim": 600}, "rope part"), ({"head_dim_v": 500}, "not 500")]:
    got = triton_dsa.supports(types.SimpleNamespace(**{**base, **changed}))
    if got is not True if want_answer is True else not (isinstance(got, str) and want_answer in got):
        failures.append(f"supports with {changed}: {got!r}, want {want_answer!r}")
if triton_dsa.supports(types.SimpleNamespace(**{**base, "device": "cpu"})) is not True:
    failures.append("a CPU point refused under TRITON_INTERPRET=1")
os.environ["TRITON_INTERPRET"] = "0"
got = triton_dsa.supports(types.SimpleNamespace(**{**base, "device": "cpu"}))
if not (isinstance(got, str) and "CUDA points only" in got):
    failures.append(f"a CPU point without the interpreter: {got!r}")
os.environ["TRITON_INTERPRET"] = "1"
if triton_dsa.KINDS != ("dsa",):
    failures.append(f"KINDS {triton_dsa.KINDS!r}, not ('dsa',)")
print(f"{time.time() - started:.0f} s")
print("\n".join(failures) or "all match")
sys.exit(1 if failures else 0)
