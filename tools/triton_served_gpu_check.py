"""examples/python-backends/triton_served.py on a GPU without building attnbench: the kernel at
shapes of the 2026 presets (Qwen3-32B at TP8 from an fp8 and a bf16 cache, 1 and 4 queries; a
mixed batch; gpt-oss's sinks with its 128 window; Llama 4's 8192-token chunks), each against
float64 on the same GPU, with a rough time (CUDA events around 20 back-to-back calls, median of 5;
not the harness's measurement, which `attnbench run configs/models/<preset>.yaml` makes).
Usage: python3 tools/triton_served_gpu_check.py [OUT.csv]
OUT.csv is checked before anything runs: a folder, a missing folder, or a file that is not an
earlier output of this script (an attnbench report, a binary) is refused, exit 2; so is a run
without a CUDA device outside TRITON_INTERPRET=1 (a CPU smoke run: fp16, lengths / 256, no timing).
"""
import math
import os
import sys
import types

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from report_reader import ReportError, fail, file_text  # noqa: E402

TOOL = "triton_served_gpu_check"
HEADER = "case,max_row_rel_err,ms,GB_per_s"


def output_path(argv):
    """OUT.csv from the command line, or None; refused (exit 2) where writing it would fail at the
    end of the run or overwrite what this script did not write."""
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        fail(TOOL, "usage: python3 tools/triton_served_gpu_check.py [OUT.csv]")
    if not argv:
        return None
    out = argv[0]
    folder = os.path.dirname(os.path.abspath(out))
    if os.path.isdir(out):
        fail(TOOL, f"{out}: a folder, not a file to write (name OUT.csv in it)")
    if not os.path.isdir(folder):
        fail(TOOL, f"{out}: no folder {folder} to write it in")
    if os.path.lexists(out):
        try:
            lines = file_text(out, "check output").splitlines()
        except ReportError as e:
            fail(TOOL, f"{e}; not overwritten")
        if lines[1:2] != [HEADER]:
            what = "an attnbench report" if lines[:1] and "schema_version" in lines[0] else \
                "not an output of this script"
            fail(TOOL, f"{out}: {what} (its second line is not '{HEADER}'); not overwritten")
    if not os.access(out if os.path.exists(out) else folder, os.W_OK):
        fail(TOOL, f"{out}: cannot be written (permissions)")
    return out


OUT = output_path(sys.argv[1:])
sys.path.insert(0, os.path.join(here, "..", "examples", "python-backends"))
sys.path.insert(0, os.path.join(here, "..", "tests"))
try:
    import torch  # noqa: E402
    import triton_served  # noqa: E402
    from served_reference import reference  # noqa: E402
except ImportError as e:
    fail(TOOL, f"needs PyTorch and Triton: {e}")

# TRITON_INTERPRET=1: a smoke run of this script on the CPU (fp16, lengths / 256, no timing).
SMOKE = os.environ.get("TRITON_INTERPRET") == "1"
if not SMOKE and not torch.cuda.is_available():
    fail(TOOL, "no CUDA device (torch.cuda.is_available() is false); TRITON_INTERPRET=1 runs a "
               "CPU smoke test of the same cases")
dev = "cpu" if SMOKE else "cuda"
DT = torch.float16 if SMOKE else torch.bfloat16
if SMOKE:
    triton_served._sms = lambda device: 4


def case(name, q_lens, kv_lens, heads, kv_heads, d, page=16, left=-1, chunk=0, sinks=False,
         fp8=False, seed=0):
    if SMOKE:
        q_lens = [max(1, n // 256) if n > 8 else n for n in q_lens][:4]
        kv_lens = [max(8, n // 256) for n in kv_lens][:4]
        left, chunk = (left // 16 if left > 0 else left), (chunk // 256 if chunk else 0)
    torch.manual_seed(seed)
    B = len(q_lens)
    scale = d ** -0.5
    q = torch.randn(sum(q_lens), heads, d, device=dev, dtype=DT)
    counts = [math.ceil(n / page) for n in kv_lens]
    pages = sum(counts)
    kf = torch.randn(pages, page, kv_heads, d, device=dev)
    vf = torch.randn(pages, page, kv_heads, d, device=dev) * 4
    k_scale = v_scale = 1.0
    if fp8:
        k_scale, v_scale = kf.abs().max().item() / 448, vf.abs().max().item() / 448
        k, v = (kf / k_scale).to(torch.float8_e4m3fn), (vf / v_scale).to(torch.float8_e4m3fn)
    else:
        k, v = kf.to(DT), vf.to(DT)
    order = torch.randperm(pages, device=dev).int()  # pages scattered
    table = torch.zeros(B, max(counts), dtype=torch.int32, device=dev)
    at = 0
    for b, c in enumerate(counts):
        table[b, :c] = order[at:at + c]
        at += c
    cu_q = torch.tensor([0] + list(torch.tensor(q_lens).cumsum(0)), dtype=torch.int32, device=dev)
    lens = torch.tensor(kv_lens, dtype=torch.int32, device=dev)
    sink = (torch.randn(heads, device=dev) + math.log(min(kv_lens))) if sinks else None
    p = types.SimpleNamespace(batch=B, heads=heads, kv_heads=kv_heads, seq_len=max(q_lens),
                              seq_len_kv=max(kv_lens), head_dim=d, head_dim_v=0)
    kw = dict(window=(left, 0), chunk=chunk, sinks=sink, cu_seqlens_q=cu_q, kv_lens=lens,
              page_table=table, k_scale=k_scale, v_scale=v_scale)
    out = triton_served.attention(q, k, v, scale, p, **kw)
    # float64 reference over the dequantized cache, sequence by sequence
    kd, vd = k.double() * k_scale, v.double() * v_scale
    worst = 0.0
    for b in range(B):
        rows = table[b, :counts[b]].long()
        kb = kd[rows].reshape(-1, kv_heads, d)[:kv_lens[b]]
        vb = vd[rows].reshape(-1, kv_heads, d)[:kv_lens[b]]
        ref = reference([q[cu_q[b]:cu_q[b + 1]]], [kb], [vb], scale, left, 0, chunk, 0.0, sink)[0]
        got = out[cu_q[b]:cu_q[b + 1]].double()
        worst = max(worst, ((got - ref).norm(dim=-1) / ref.norm(dim=-1)).max().item())
    if SMOKE:
        print(f"{name},{worst:.4g}", flush=True)
        return f"{name},{worst:.4g}"
    # rough time: 20 calls back to back, median of 5
    for _ in range(3):
        triton_served.attention(q, k, v, scale, p, **kw)
    times = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(20):
            triton_served.attention(q, k, v, scale, p, **kw)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 20)
    ms = sorted(times)[2]
    keys = 0
    for ql, kl in zip(q_lens, kv_lens):
        lo = max(0, kl - ql - left) if left >= 0 else 0
        if chunk > 0:
            lo = max(lo, (kl - ql) // chunk * chunk)
        keys += kl - lo
    gbytes = (keys * kv_heads * d * 2 * (1 if fp8 else 2) + q.numel() * 2 * 2) / 1e9
    row = f"{name},{worst:.4g},{ms:.4f},{gbytes / (ms / 1e3):.0f}"  # GB per second
    print(row, flush=True)
    return row


rows = [HEADER]
print(rows[0])
print("# " + ("cpu smoke" if SMOKE else torch.cuda.get_device_name()), flush=True)
qwen = dict(heads=8, kv_heads=1, d=128)  # Qwen3-32B at TP8
rows.append(case("qwen3-32b tp8 decode b16x32k fp8 cache", [1] * 16, [32768] * 16, fp8=True, **qwen))
rows.append(case("qwen3-32b tp8 decode b16x32k bf16 cache", [1] * 16, [32768] * 16, **qwen))
rows.append(case("qwen3-32b tp8 4 queries b16x32k fp8 cache", [4] * 16, [32768] * 16, fp8=True, **qwen))
rows.append(case("qwen3-32b tp8 4 queries b16x32k bf16", [4] * 16, [32768] * 16, **qwen))
rows.append(case("qwen3-32b tp8 mixed 2x2048 + 32x1 over 1024", [2048, 2048] + [1] * 32,
                 [2048, 2048] + [1024] * 32, **qwen))
oss = dict(heads=8, kv_heads=1, d=64)  # gpt-oss-120b at TP8
rows.append(case("gpt-oss tp8 decode b64x8k sinks", [1] * 64, [8192] * 64, sinks=True, **oss))
rows.append(case("gpt-oss tp8 decode b64x8k sinks window 128", [1] * 64, [8192] * 64, sinks=True,
                 left=127, **oss))
rows.append(case("gpt-oss tp8 2 queries b64x8k sinks fp8", [2] * 64, [8192] * 64, sinks=True,
                 fp8=True, **oss))
llama = dict(heads=5, kv_heads=1, d=128)  # Llama-4-Scout at TP8
rows.append(case("llama-4 tp8 decode b16x20000 chunk 8192", [1] * 16, [20000] * 16, chunk=8192, **llama))
rows.append(case("llama-4 tp8 4 queries b16x16386 chunk 8192 (across an edge)", [4] * 16,
                 [16386] * 16, chunk=8192, **llama))
if OUT:
    with open(OUT, "w") as f:
        f.write("# " + ("cpu smoke" if SMOKE else torch.cuda.get_device_name()) + "\n"
                + "\n".join(rows) + "\n")
