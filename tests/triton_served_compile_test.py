"""examples/python-backends/triton_served.py compiled for the H100/H200 (sm_90) on a machine with no
GPU: each launch attention() makes at the 2026 presets' shapes (every cache layout, bf16, fp16 and
fp8_e4m3 caches, sinks, windows, chunks, softcap, groups of 1 to 16 padded to a power of two,
head_dim 64, 128 and 256, decode split across programs and prefill finished in one) is caught
before it runs, and its kernel compiled ahead of time through Triton's own compiler and ptxas:
what the interpreter of the CPU test accepts and the GPU's compiler refuses (a global read inside a
kernel, types that do not unify) fails here. Each kernel's shared memory must fit an H100 block
(227 KiB). Run by ctest (Examples.TritonServedCompilesForSm90); exits 77 (skipped) without Triton."""
import inspect
import os
import sys
import types

import torch

try:
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
except ImportError:
    print("no triton: skipped")
    sys.exit(77)
sys.path.insert(0, sys.argv[1])  # examples/python-backends
import triton_served  # noqa: E402

SM90 = GPUTarget("cuda", 90, 32)
SHARED_PER_BLOCK = 227 * 1024  # sm_90's opt-in maximum
TYPES = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32",
         torch.float8_e4m3fn: "fp8e4nv", torch.int32: "i32", torch.int64: "i64"}


class Launches:
    """Stands in for a @triton.jit kernel: `kernel[grid](...)` records the call, runs nothing."""

    def __init__(self, kernel, seen):
        self.kernel, self.seen = kernel, seen

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.seen.append((self.kernel, args, kwargs))


def signature(kernel, args, kwargs):
    """Triton's signature and constexprs of one launch, from the values it was given."""
    params = list(inspect.signature(kernel.fn).parameters.values())
    values = dict(zip([p.name for p in params], args)) | kwargs
    sig, constexprs = {}, {}
    for i, p in enumerate(params):
        value = values[p.name]
        if p.annotation is tl.constexpr:
            sig[p.name], constexprs[(i,)] = "constexpr", value
        elif isinstance(value, torch.Tensor):
            sig[p.name] = "*" + TYPES[value.dtype]
        elif isinstance(value, float):
            sig[p.name] = "fp32"
        else:
            sig[p.name] = "i32" if -2**31 <= value < 2**31 else "i64"
    options = {k: kwargs[k] for k in ("num_warps", "num_stages") if k in kwargs}
    return sig, constexprs, options


def launches(q_lens, kv_lens, heads, kv_heads, d, dv=None, layout="paged", page=16, dtype=torch.bfloat16,
             fp8=False, sinks=False, window=(-1, 0), chunk=0, softcap=0.0):
    """The kernels attention() launches for this problem, on tensors of the meta device."""
    meta = dict(device="meta")
    dv = dv or d
    kv_dtype = torch.float8_e4m3fn if fp8 else dtype
    problem = types.SimpleNamespace(batch=len(q_lens), heads=heads, kv_heads=kv_heads,
                                    seq_len=max(q_lens), seq_len_kv=max(kv_lens), head_dim=d,
                                    head_dim_v=0 if dv == d else dv)
    kw = dict(window=window, chunk=chunk, softcap=softcap,
              sinks=torch.empty(heads, dtype=torch.float32, **meta) if sinks else None,
              k_scale=0.5 if fp8 else 1.0, v_scale=0.25 if fp8 else 1.0)
    if layout == "uniform":
        q = torch.empty(len(q_lens), heads, max(q_lens), d, dtype=dtype, **meta)
        k = torch.empty(len(q_lens), kv_heads, max(kv_lens), d, dtype=kv_dtype, **meta)
        v = torch.empty(len(q_lens), kv_heads, max(kv_lens), dv, dtype=kv_dtype, **meta)
    else:
        q = torch.empty(sum(q_lens), heads, d, dtype=dtype, **meta)
        kw["cu_seqlens_q"] = torch.empty(len(q_lens) + 1, dtype=torch.int32, **meta)
        if layout == "paged":
            pages = sum(-(-n // page) for n in kv_lens)
            k = torch.empty(pages, page, kv_heads, d, dtype=kv_dtype, **meta)
            v = torch.empty(pages, page, kv_heads, dv, dtype=kv_dtype, **meta)
            kw["kv_lens"] = torch.empty(len(q_lens), dtype=torch.int32, **meta)
            kw["page_table"] = torch.empty(len(q_lens), -(-max(kv_lens) // page), dtype=torch.int32, **meta)
        else:
            k = torch.empty(sum(kv_lens), kv_heads, d, dtype=kv_dtype, **meta)
            v = torch.empty(sum(kv_lens), kv_heads, dv, dtype=kv_dtype, **meta)
            kw["cu_seqlens_kv"] = torch.empty(len(q_lens) + 1, dtype=torch.int32, **meta)
    seen = []
    kernels = triton_served._attend, triton_served._merge
    triton_served._attend, triton_served._merge = (Launches(k, seen) for k in kernels)
    try:
        triton_served.attention(q, k, v, d ** -0.5, problem, **kw)
    finally:
        triton_served._attend, triton_served._merge = kernels
    return seen


triton_served._sms = lambda device: 132  # an H100's SMs: the splits a decode gets there
CASES = {  # the presets' shapes at TP1 and TP8 (configs/models/*.yaml)
    "qwen3-32b tp8 decode b16x32k, fp8 cache": dict(q_lens=[1] * 16, kv_lens=[32768] * 16,
                                                      heads=8, kv_heads=1, d=128, fp8=True),
    "qwen3-32b tp8 4 queries, bf16 cache": dict(q_lens=[4] * 16, kv_lens=[32768] * 16, heads=8,
                                                kv_heads=1, d=128),
    "qwen3-32b tp1 decode b128x128k, contiguous": dict(q_lens=[1] * 128, kv_lens=[131072] * 128,
                                                       heads=64, kv_heads=8, d=128, layout="uniform"),
    "qwen3-32b mixed batch, fp16": dict(q_lens=[2048, 2048] + [1] * 32, kv_lens=[2048] * 2 + [1024] * 32,
                                        heads=64, kv_heads=8, d=128, dtype=torch.float16),
    "qwen3-32b ragged prefill, packed": dict(q_lens=[4096, 700], kv_lens=[4096, 700], heads=64,
                                             kv_heads=8, d=128, layout="packed"),
    "gpt-oss tp8 decode, sinks, window 128": dict(q_lens=[1] * 64, kv_lens=[8192] * 64, heads=8,
                                                   kv_heads=1, d=64, sinks=True, window=(127, 0)),
    "gpt-oss tp8 2 queries, sinks, fp8 cache": dict(q_lens=[2] * 64, kv_lens=[8192] * 64, heads=8,
                                                    kv_heads=1, d=64, sinks=True, fp8=True),
    "gpt-oss tp1 prefill, sinks": dict(q_lens=[2048, 512], kv_lens=[2048, 512], heads=64,
                                       kv_heads=8, d=64, sinks=True, layout="packed"),
    "qwen3.5 tp1 decode d256, group 16, fp8": dict(q_lens=[1] * 16, kv_lens=[65536] * 16, heads=32,
                                                   kv_heads=2, d=256, fp8=True),
    "qwen3.5 tp1 prefill d256": dict(q_lens=[4096] * 2, kv_lens=[4096] * 2, heads=32, kv_heads=2,
                                     d=256),
    "glm-4.6 tp8 decode, group 12": dict(q_lens=[1] * 64, kv_lens=[16384] * 64, heads=12,
                                         kv_heads=1, d=128),
    "llama-4 tp8 4 queries, chunk 8192, group 5": dict(q_lens=[4] * 16, kv_lens=[16386] * 16,
                                                       heads=5, kv_heads=1, d=128, chunk=8192),
    "gemma-3 tp1 decode, window 1024, group 2": dict(q_lens=[1] * 32, kv_lens=[32768] * 32,
                                                     heads=32, kv_heads=16, d=128, window=(1023, 0)),
    "group 1, softcap, fp16 uniform prefill": dict(q_lens=[1024], kv_lens=[1024], heads=8, kv_heads=8,
                                                   d=128, layout="uniform", dtype=torch.float16,
                                                   softcap=30.0),
    "v narrower than q and k (256 / 128)": dict(q_lens=[1] * 8, kv_lens=[4096] * 8, heads=16,
                                                kv_heads=16, d=256, dv=128),
}

failures, compiled = [], {}
for name, case in CASES.items():
    seen = launches(**case)
    if not seen or seen[0][0] is not triton_served._attend:
        failures.append(f"{name}: launched {[k.fn.__name__ for k, _, _ in seen]}, not _attend first")
    for kernel, args, kwargs in seen:
        # At head_dim 256 a tile of 128 rows spills (ptxas: 808 bytes a thread, 128 at 64 rows).
        wide = max(case["d"], case.get("dv") or case["d"]) > 128
        if kernel is triton_served._attend and wide and kwargs["BLOCK_M"] > 64:
            failures.append(f"{name}: a tile of {kwargs['BLOCK_M']} rows at head_dim 256, above 64")
        sig, constexprs, options = signature(kernel, args, kwargs)
        key = (kernel.fn.__name__, tuple(sorted(sig.items())), tuple(sorted(constexprs.items())),
               tuple(sorted(options.items())))
        if key not in compiled:
            try:
                binary = triton.compile(ASTSource(fn=kernel, signature=sig, constexprs=constexprs),
                                        target=SM90, options=options)
                compiled[key] = binary.metadata.shared
            except Exception as e:  # the compiler's own message, first lines
                compiled[key] = None
                failures.append(f"{name}: {kernel.fn.__name__} does not compile for sm_90: "
                                + "\n".join(str(e).splitlines()[:12]))
        shared = compiled[key]
        if shared is not None and shared > SHARED_PER_BLOCK:
            failures.append(f"{name}: {kernel.fn.__name__} needs {shared} bytes of shared memory, "
                            f"above sm_90's {SHARED_PER_BLOCK}")
        print(f"{name:45s} {kernel.fn.__name__:8s} shared {shared}")
# Both paths were compiled: split (with _merge) and finished in one program.
names = {key[0] for key in compiled}
direct = {dict(key[2])[(list(inspect.signature(triton_served._attend.fn).parameters).index("DIRECT"),)]
          for key in compiled if key[0] == "_attend"}
if names != {"_attend", "_merge"} or direct != {True, False}:
    failures.append(f"compiled {sorted(names)} with DIRECT {sorted(direct)}: want both kernels, both paths")
print(f"{len(compiled)} kernels compiled for sm_90")
print("\n".join(failures) or "all compile")
sys.exit(1 if failures else 0)
