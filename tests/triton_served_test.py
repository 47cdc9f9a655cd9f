"""examples/python-backends/triton_served.py against float64, on the CPU through Triton's
interpreter (TRITON_INTERPRET=1): every cache layout (uniform, packed, paged with its pages
scattered), 1-6 queries a sequence and a mixed batch, grouped heads padded to a power of two and
a group of one, a window, a chunk, sinks, a softcap, an fp8_e4m3 cache with its two scales apart,
each once finished in one program and once split across three with the merge kernel. fp16: the
interpreter reads bf16 wrongly (numpy has none); the GPU rows are checked by attnbench itself. Run
by ctest (Examples.TritonServedMatchesFloat64); exits 77 (skipped) without Triton."""
import math
import os
import sys
import types

os.environ["TRITON_INTERPRET"] = "1"
import torch  # noqa: E402

try:
    import triton  # noqa: F401,E402
except ImportError:
    print("no triton: skipped")
    sys.exit(77)
sys.path.insert(0, sys.argv[1])  # examples/python-backends
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import triton_served  # noqa: E402
from served_reference import reference  # noqa: E402

DT = torch.float16
triton_served._sms = lambda device: 4  # no GPU to ask


def scattered_pages(ks, vs, page, kv_heads, d, dv):
    """The cache as pages of `page` tokens in a random order, three pages unused, and its table."""
    counts = [math.ceil(k.size(0) / page) for k in ks]
    order = torch.randperm(sum(counts) + 3)
    k_cache = torch.zeros(len(order), page, kv_heads, d, dtype=ks[0].dtype)
    v_cache = torch.zeros(len(order), page, kv_heads, dv, dtype=vs[0].dtype)
    table = torch.zeros(len(ks), max(counts), dtype=torch.int32)
    used = 0
    for b, (k, v) in enumerate(zip(ks, vs)):
        for j in range(counts[b]):
            at = int(order[used])
            used += 1
            table[b, j] = at
            rows = slice(j * page, min((j + 1) * page, k.size(0)))
            k_cache[at, : rows.stop - rows.start] = k[rows]
            v_cache[at, : rows.stop - rows.start] = v[rows]
    return k_cache, v_cache, table


def offsets(lens):
    return torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32)


def outputs(q_lens, kv_lens, layout="paged", heads=8, kv_heads=2, d=64, dv=None, page=4,
            causal=True, left=-1, right=None, chunk=0, softcap=0.0, sinks=False, fp8=False):
    """The kernel's rows and float64's, per sequence [q_len, heads, dv]."""
    torch.manual_seed(0)
    scale = d ** -0.5
    qs = [torch.randn(n, heads, d).to(DT) for n in q_lens]
    kf = [torch.randn(n, kv_heads, d) for n in kv_lens]
    dv = dv or d
    vf = [torch.randn(n, kv_heads, dv) for n in kv_lens]
    k_scale = v_scale = 1.0
    if fp8:  # the cache's numbers and their two scales, 4x apart (a mixed-up scale shows)
        k_scale, v_scale = 0.05, 0.0125  # randn within e4m3fn's 448
        ks = [(t / k_scale).to(torch.float8_e4m3fn) for t in kf]
        vs = [(t / v_scale).to(torch.float8_e4m3fn) for t in vf]
    else:
        ks, vs = [t.to(DT) for t in kf], [t.to(DT) for t in vf]
    sink = torch.randn(heads) * 3 if sinks else None
    right = (0 if causal else -1) if right is None else right
    want = reference(qs, [k.float() * k_scale for k in ks], [v.float() * v_scale for v in vs],
                     scale, left, right, chunk, softcap, sink)
    problem = types.SimpleNamespace(batch=len(q_lens), heads=heads, kv_heads=kv_heads,
                                    seq_len=max(q_lens), seq_len_kv=max(kv_lens), head_dim=d,
                                    head_dim_v=0)  # attention's: 0, v as wide as q
    kw = dict(window=(left, right), softcap=softcap, chunk=chunk, sinks=sink, k_scale=k_scale,
              v_scale=v_scale)
    if layout == "uniform":  # [batch, heads, seq, d]
        q = torch.stack(qs).transpose(1, 2).contiguous()
        k = torch.stack(ks).transpose(1, 2).contiguous()
        v = torch.stack(vs).transpose(1, 2).contiguous()
        out = triton_served.attention(q, k, v, scale, problem, **kw)
        got = [out[b].transpose(0, 1) for b in range(len(q_lens))]
    else:
        q = torch.cat(qs)
        if layout == "paged":
            k, v, table = scattered_pages(ks, vs, page, kv_heads, d, dv)
            out = triton_served.attention(q, k, v, scale, problem, cu_seqlens_q=offsets(q_lens),
                                          kv_lens=torch.tensor(kv_lens, dtype=torch.int32),
                                          page_table=table, **kw)
        else:
            out = triton_served.attention(q, torch.cat(ks), torch.cat(vs), scale, problem,
                                          cu_seqlens_q=offsets(q_lens),
                                          cu_seqlens_kv=offsets(kv_lens), **kw)
        got = list(out.split(q_lens))
    return got, want


def error(*args, **kwargs):
    got, want = outputs(*args, **kwargs)
    return max(((g.double() - w).norm(dim=-1) / w.norm(dim=-1)).max().item()
               for g, w in zip(got, want))


CASES = {
    "paged decode, group 4": dict(q_lens=[1, 1, 1], kv_lens=[37, 5, 64]),
    "paged, 3-4 queries": dict(q_lens=[4, 3, 4], kv_lens=[37, 9, 64]),
    "mixed batch: a prefill and two decodes": dict(q_lens=[20, 1, 1], kv_lens=[20, 40, 13]),
    "packed cache": dict(q_lens=[3, 1], kv_lens=[30, 17], layout="packed"),
    "uniform decode": dict(q_lens=[1, 1], kv_lens=[50, 50], layout="uniform"),
    "uniform, not causal": dict(q_lens=[5, 5], kv_lens=[50, 50], layout="uniform", causal=False),
    # not causal: the block's last chunk bounds its keys (two query blocks of 32 rows)
    "chunk 16, not causal, a prefill": dict(q_lens=[40, 1], kv_lens=[40, 33], chunk=16,
                                            causal=False),
    "window 0 (each query its own key)": dict(q_lens=[4, 1], kv_lens=[60, 33], left=0),
    "window (5, 3), not causal, keys ahead": dict(q_lens=[4, 1], kv_lens=[60, 33], left=5,
                                                 right=3, causal=False),
    # two query blocks of 32: the first block's keys end 3 past its last query
    "window (-1, 3), a prefill": dict(q_lens=[40, 1], kv_lens=[40, 33], right=3, causal=False),
    # long enough for every split of three to hold keys, the window starting far in
    "window 50 over 1000 keys": dict(q_lens=[1, 2], kv_lens=[1000, 400], left=50, page=16),
    "group 1, 100 queries, window 7": dict(q_lens=[100], kv_lens=[100], heads=2, kv_heads=2,
                                           left=7),
    "v narrower than q and k (32 / 64)": dict(q_lens=[2, 1], kv_lens=[60, 33], dv=32),
    "v narrower, packed, sinks": dict(q_lens=[2, 1], kv_lens=[60, 33], dv=32, layout="packed",
                                      sinks=True),
    "v narrower, uniform": dict(q_lens=[1, 1], kv_lens=[50, 50], dv=32, layout="uniform"),
    "window 7": dict(q_lens=[4, 1], kv_lens=[60, 33], left=7),
    "chunk 16": dict(q_lens=[6, 1], kv_lens=[60, 33], chunk=16),
    # queries at 46-51: a block across a chunk's edge, each row masked on its own side of it
    "chunk 16, queries across its edge": dict(q_lens=[6, 1], kv_lens=[52, 33], chunk=16),
    "sinks": dict(q_lens=[2, 1], kv_lens=[60, 33], sinks=True),
    "softcap 5": dict(q_lens=[2, 1], kv_lens=[60, 33], softcap=5.0),
    # a prefill: most keys masked, so a cap applied to them (not -inf) shows
    "softcap 5, a prefill": dict(q_lens=[40, 1], kv_lens=[40, 33], softcap=5.0),
    "fp8_e4m3 cache": dict(q_lens=[1, 2], kv_lens=[60, 33], fp8=True),
    "group 5, padded to 8": dict(q_lens=[2, 1], kv_lens=[60, 33], heads=10, kv_heads=2),
    "group 1": dict(q_lens=[2, 1], kv_lens=[60, 33], heads=4, kv_heads=4),
    "head_dim 128": dict(q_lens=[1, 1], kv_lens=[300, 100], d=128),
}
TOLERANCE = 2e-3  # fp16 inputs, float32 accumulation: ~3e-4 seen

failures = []
choose = triton_served._splits
for splits in (None, 3):
    triton_served._splits = choose if splits is None else (lambda *a: splits)
    for name, case in CASES.items():
        err = error(**case)
        label = f"{name} ({'split in 3' if splits else 'as chosen'})"
        print(f"{label:55s} {err:.2e}")
        if not err < TOLERANCE:
            failures.append(f"{label}: error {err:.3g} above {TOLERANCE}")
    # A query before every key (3 queries, 1 key: the first two see nothing) comes out zeros, not
    # NaN, with sinks (a sink has no value) and without, finished in one program or merged.
    for sinks in (False, True):
        got, _ = outputs([3], [1], layout="packed", sinks=sinks)
        if not torch.equal(got[0][:2], torch.zeros_like(got[0][:2])):
            failures.append(f"rows that see no key, sinks {sinks}, splits {splits}: not zeros")
# The splits chosen: one where the programs fill the GPU (prefill), more for a decode.
triton_served._splits = choose
if choose(1, 257, 64, "cpu") != 2:  # a partial block of keys rounds up
    failures.append(f"257 keys split {choose(1, 257, 64, 'cpu')} ways, not 2")
triton_served._sms = lambda device: 64
if choose(1, 1 << 20, 64, "cpu") != 32:  # 32 at most, however idle the GPU
    failures.append(f"a million keys on 64 SMs split {choose(1, 1 << 20, 64, 'cpu')} ways, not 32")
triton_served._sms = lambda device: 4
if choose(1024, 8192, 64, "cpu") != 1 or choose(4, 8192, 64, "cpu") != 2:
    failures.append("split choice: want 1 at 1024 programs and 2 at 4 (4 SMs), got "
                    f"{choose(1024, 8192, 64, 'cpu')} and {choose(4, 8192, 64, 'cpu')}")
if choose(1, 256, 64, "cpu") != 1:  # 4 key blocks at least a split
    failures.append(f"256 keys split {choose(1, 256, 64, 'cpu')} ways, not 1")
# What it refuses, and what it takes: attention's head_dim_v of 0 is v as wide as q. The GPU's
# gate: without the interpreter.
os.environ["TRITON_INTERPRET"] = "0"
base = dict(device="cuda", direction="fwd", dtype_name="bf16", head_dim=128, head_dim_v=0)
for changed, want in [({}, True), ({"dtype_name": "fp16"}, True), ({"head_dim_v": 64}, True),
                      ({"direction": "bwd"}, "forward only"),
                      ({"dtype_name": "fp32"}, "not fp32"), ({"dtype_name": "fp8_e4m3"}, "not fp8_e4m3"),
                      ({"head_dim": 96}, "head_dim a power of two"), ({"head_dim": 512}, "not 512"),
                      ({"head_dim": 8}, "not 8"), ({"head_dim_v": 192}, "head_dim_v a power of two"),
                      ({"head_dim": 16}, True), ({"head_dim": 256}, True), ({"head_dim_v": 16}, True),
                      ({"head_dim_v": 256}, True), ({"head_dim_v": 512}, "not 512")]:
    got = triton_served.supports(types.SimpleNamespace(**{**base, **changed}))
    if got is not True if want is True else not (isinstance(got, str) and want in got):
        failures.append(f"supports with {changed}: {got!r}, want {want!r}")
# A CPU point: under the interpreter only (this test runs under it), in fp16 (the interpreter
# reads bf16 wrongly: refused, a CUDA point's too, since the interpreter runs it on the host).
os.environ["TRITON_INTERPRET"] = "1"
if triton_served.supports(types.SimpleNamespace(**{**base, "device": "cpu", "dtype_name": "fp16"})) is not True:
    failures.append("an fp16 CPU point refused under TRITON_INTERPRET=1")
for device in ("cpu", "cuda"):
    got = triton_served.supports(types.SimpleNamespace(**{**base, "device": device}))
    if not (isinstance(got, str) and "interpreter" in got):
        failures.append(f"a bf16 {device} point under TRITON_INTERPRET=1: {got!r}")
os.environ["TRITON_INTERPRET"] = "0"
got = triton_served.supports(types.SimpleNamespace(**{**base, "device": "cpu"}))
if not (isinstance(got, str) and "CUDA points only" in got):
    failures.append(f"a CPU point without the interpreter: {got!r}")
os.environ["TRITON_INTERPRET"] = "1"
print("\n".join(failures) or "all match")
sys.exit(1 if failures else 0)
