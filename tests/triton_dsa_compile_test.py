"""examples/python-backends/triton_dsa.py compiled for the H100/H200 (sm_90) on a machine with no
GPU: each launch dsa_attention() makes at DeepSeek-V3.2 / GLM-5 shapes (decode of batch 1, 32 and
128 with 16 and 128 heads after tensor parallelism, 1 and 2 queries a sequence, topk 2048, pages
of 64 and of 1 token, a bf16 and an fp8_e4m3 cache, the packed contiguous and uniform layouts, a
prefill of 4096 query rows) is caught before it runs, and its kernel compiled ahead of time through
Triton's own compiler and ptxas: what the interpreter of the CPU test accepts and the GPU's
compiler refuses (a global read inside a kernel, types that do not unify, a run-time loop bound)
fails here. Each kernel's shared memory must fit an H100 block (227 KiB), and it must not spill
registers to local memory; each kernel's shared memory and registers are printed. Usage:
python3 tests/triton_dsa_compile_test.py [examples/python-backends]; exits 77 (skipped) without
Triton."""
import inspect
import os
import re
import subprocess
import sys
import tempfile

os.environ.pop("TRITON_INTERPRET", None)  # the GPU's code path, not the interpreter's
import torch  # noqa: E402

try:
    import triton  # noqa: E402
    import triton.language as tl  # noqa: E402
    from triton.backends.compiler import GPUTarget  # noqa: E402
    from triton.backends.compiler import BaseBackend  # noqa: E402
    from triton.compiler import ASTSource  # noqa: E402
    from triton.runtime.jit import native_specialize_impl as specialize  # noqa: E402
except ImportError:
    print("no triton: skipped")
    sys.exit(77)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "examples",
                                                                       "python-backends"))
import triton_dsa  # noqa: E402

SM90 = GPUTarget("cuda", 90, 32)
SHARED_PER_BLOCK = 227 * 1024  # sm_90's opt-in maximum
D, DV, TOPK = 576, 512, 2048


class Launches:
    """Stands in for a @triton.jit kernel: `kernel[grid](...)` records the call, runs nothing."""

    def __init__(self, kernel, seen):
        self.kernel, self.seen = kernel, seen

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.seen.append((self.kernel, grid, args, kwargs))


def signature(kernel, args, kwargs):
    """Triton's signature, constexprs and attributes of one launch, specialized as its JIT does
    (an int of 1 a constexpr; a pointer, or an int divisible by 16, marked divisible by 16: the
    loads' vector width follows), from the values it was given."""
    params = list(inspect.signature(kernel.fn).parameters.values())
    values = dict(zip([p.name for p in params], args)) | kwargs
    sig, constexprs, attrs = {}, {}, {}
    for i, p in enumerate(params):
        value = values[p.name]
        if p.annotation is tl.constexpr:
            sig[p.name], constexprs[(i,)] = "constexpr", value
            continue
        kind, attr = specialize(BaseBackend, value, False, True, True)
        if kind == "constexpr":
            sig[p.name], constexprs[(i,)] = "constexpr", value
        else:
            sig[p.name] = kind
            if attr:
                attrs[(i,)] = BaseBackend.parse_attr(attr)
    options = {k: kwargs[k] for k in ("num_warps", "num_stages") if k in kwargs}
    return sig, constexprs, attrs, options


def resources(binary):
    """(registers a thread, spilled bytes, stack frame bytes) of a compiled kernel, from
    cuobjdump's resource report of its cubin (Triton's own copy of cuobjdump)."""
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(binary.asm["cubin"])
        f.flush()
        text = subprocess.run([tool, "--dump-resource-usage", f.name], capture_output=True,
                              text=True, check=True).stdout
    number = lambda name: int(re.search(name + r":(\d+)", text).group(1))  # noqa: E731
    return number("REG"), number("STACK"), number("LOCAL")


def launches(q_lens, kv_lens, heads, layout="paged", page=64, dtype=torch.bfloat16, fp8=False):
    """The kernels dsa_attention() launches for this problem, on tensors of the meta device."""
    meta = dict(device="meta")
    kv_dtype = torch.float8_e4m3fn if fp8 else dtype
    batch, rows = len(q_lens), sum(q_lens)
    kw = dict(k_scale=0.5 if fp8 else 1.0, v_scale=0.5 if fp8 else 1.0)
    if layout == "uniform":
        q = torch.empty(batch, heads, max(q_lens), D, dtype=dtype, **meta)
        k = torch.empty(batch, 1, max(kv_lens), D, dtype=kv_dtype, **meta)
        indices = torch.empty(batch, max(q_lens), TOPK, dtype=torch.int32, **meta)
    else:
        q = torch.empty(rows, heads, D, dtype=dtype, **meta)
        indices = torch.empty(rows, TOPK, dtype=torch.int32, **meta)
        kw["cu_seqlens_q"] = torch.empty(batch + 1, dtype=torch.int32, **meta)
        if layout == "paged":
            pages = sum(-(-n // page) for n in kv_lens)
            k = torch.empty(pages, page, 1, D, dtype=kv_dtype, **meta)
            kw["kv_lens"] = torch.empty(batch, dtype=torch.int32, **meta)
            kw["page_table"] = torch.empty(batch, -(-max(kv_lens) // page), dtype=torch.int32, **meta)
        else:
            k = torch.empty(sum(kv_lens), 1, D, dtype=kv_dtype, **meta)
            kw["cu_seqlens_kv"] = torch.empty(batch + 1, dtype=torch.int32, **meta)
    seen = []
    kernels = triton_dsa._dsa, triton_dsa._merge
    triton_dsa._dsa, triton_dsa._merge = (Launches(k, seen) for k in kernels)
    try:
        out = triton_dsa.dsa_attention(q, k, k[..., :DV], indices, 192 ** -0.5, **kw)
    finally:
        triton_dsa._dsa, triton_dsa._merge = kernels
    want = (rows, heads, DV) if layout != "uniform" else (batch, heads, max(q_lens), DV)
    assert tuple(out.shape) == want and out.dtype == dtype, (tuple(out.shape), out.dtype)
    return seen


triton_dsa._sms = lambda device: 132  # an H100's SMs: the splits a decode gets there
CASES = {  # DeepSeek-V3.2 / GLM-5: 128 query heads at TP1, 16 at TP8; topk 2048
    "decode b1 h16 32k, page 64": dict(q_lens=[1], kv_lens=[32768], heads=16),
    "decode b32 h16 64k, page 64": dict(q_lens=[1] * 32, kv_lens=[65536] * 32, heads=16),
    "decode b32 h16 64k, fp8 cache": dict(q_lens=[1] * 32, kv_lens=[65536] * 32, heads=16,
                                         fp8=True),
    "decode b128 h16 8k, page 1": dict(q_lens=[1] * 128, kv_lens=[8192] * 128, heads=16, page=1),
    "decode b128 h16 8k, page 1, fp8": dict(q_lens=[1] * 128, kv_lens=[8192] * 128, heads=16,
                                            page=1, fp8=True),
    "2 queries b32 h16 16k, page 64": dict(q_lens=[2] * 32, kv_lens=[16384] * 32, heads=16),
    "decode b1 h128 128k, page 64": dict(q_lens=[1], kv_lens=[131072], heads=128),
    "decode b32 h128 32k, page 64": dict(q_lens=[1] * 32, kv_lens=[32768] * 32, heads=128),
    "decode b32 h128 32k, fp8 cache": dict(q_lens=[1] * 32, kv_lens=[32768] * 32, heads=128,
                                          fp8=True),
    "decode b128 h128 8k, page 1": dict(q_lens=[1] * 128, kv_lens=[8192] * 128, heads=128, page=1),
    "2 queries b32 h128 16k, page 1, fp8": dict(q_lens=[2] * 32, kv_lens=[16384] * 32, heads=128,
                                                page=1, fp8=True),
    "decode b32 h64 32k, page 64": dict(q_lens=[1] * 32, kv_lens=[32768] * 32, heads=64),
    "decode b32 h32 32k, fp16, page 64": dict(q_lens=[1] * 32, kv_lens=[32768] * 32, heads=32,
                                               dtype=torch.float16),
    "decode b32 h16 32k, packed contiguous": dict(q_lens=[1] * 32, kv_lens=[32768] * 32,
                                                  heads=16, layout="packed"),
    "decode b32 h16 32k, uniform": dict(q_lens=[1] * 32, kv_lens=[32768] * 32, heads=16,
                                        layout="uniform"),
    "prefill 4096 rows h16, page 64": dict(q_lens=[4096], kv_lens=[4096], heads=16),
    "prefill 4096 rows h128, page 64": dict(q_lens=[4096], kv_lens=[4096], heads=128),
    "prefill 4096 rows h128, fp8, page 1": dict(q_lens=[4096], kv_lens=[8192], heads=128, page=1,
                                                fp8=True),
    "prefill 2x2048 rows h128, packed": dict(q_lens=[2048, 2048], kv_lens=[4096, 2048], heads=128,
                                             layout="packed"),
}

failures, compiled = [], {}
for name, case in CASES.items():
    seen = launches(**case)
    if not seen or seen[0][0] is not triton_dsa._dsa:
        failures.append(f"{name}: launched {[k.fn.__name__ for k, *_ in seen]}, not _dsa first")
    for kernel, grid, args, kwargs in seen:
        sig, constexprs, attrs, options = signature(kernel, args, kwargs)
        key = (kernel.fn.__name__, tuple(sorted(sig.items())), tuple(sorted(constexprs.items())),
               str(sorted(attrs.items())), tuple(sorted(options.items())))
        if key not in compiled:
            try:
                binary = triton.compile(ASTSource(fn=kernel, signature=sig, constexprs=constexprs, attrs=attrs),
                                        target=SM90, options=options)
                compiled[key] = (binary.metadata.shared, *resources(binary))
            except Exception as e:  # the compiler's own message, first lines
                compiled[key] = None
                failures.append(f"{name}: {kernel.fn.__name__} does not compile for sm_90: "
                                + "\n".join(str(e).splitlines()[:12]))
        if compiled[key] is None:
            continue
        shared, regs, stack, local = compiled[key]
        if shared > SHARED_PER_BLOCK:
            failures.append(f"{name}: {kernel.fn.__name__} needs {shared} bytes of shared memory, "
                            f"above sm_90's {SHARED_PER_BLOCK}")
        if local or stack:
            failures.append(f"{name}: {kernel.fn.__name__} spills ({local} bytes of local memory, "
                            f"a stack frame of {stack})")
        tiles = ""
        if kernel is triton_dsa._dsa:
            tiles = (f"grid {grid[0]:6d} = rows x {kwargs['BLOCK_H']}-head tiles x splits, "
                     f"BLOCK_N {kwargs['BLOCK_N']}, warps {kwargs['num_warps']}, "
                     f"stages {kwargs['num_stages']}, {'direct' if kwargs['DIRECT'] else 'split'}")
        print(f"{name:40s} {kernel.fn.__name__:6s} shared {shared:6d} regs {regs:3d}  {tiles}")
# Both paths were compiled: split (with _merge) and finished in one program.
names = {key[0] for key in compiled}
direct = {dict(key[2])[(list(inspect.signature(triton_dsa._dsa.fn).parameters).index("DIRECT"),)]
          for key in compiled if key[0] == "_dsa"}
if names != {"_dsa", "_merge"} or direct != {True, False}:
    failures.append(f"compiled {sorted(names)} with DIRECT {sorted(direct)}: want both kernels, both paths")
print(f"{len(compiled)} kernels compiled for sm_90")
print("\n".join(failures) or "all compile")
sys.exit(1 if failures else 0)
