"""The linear-attention backends (examples/python-backends/torch_linear.py and fla_linear.py, kinds
`gdn` and `kda` of docs/linear-attention.md) against a float64 recurrence written here, on the CPU.

The oracle is this file's own, from the contract alone: for each sequence, value head and token in
order, q and k L2-normalized (x / sqrt(sum x^2 + 1e-6), key head h // (Hv / Hk)), S = exp(g) S (gdn:
a number; kda: row i times exp(g[i])), u = beta (v - S^T k), S = S + k u^T, o = scale S^T q, in
float64 from the inputs' own numbers (bf16 ones read exactly) and the pool's initial states.

--part reference: torch_linear against the oracle: gdn with Hv = 2 Hk, kda, bf16 and fp32 inputs,
fp32 and bf16 state pools, ragged decodes (1 token a sequence; 1-4 tokens), prefills (70 tokens
beside shorter ones), a pool with more slots than sequences and shuffled state_indices, a scale
other than 1/sqrt(dk); o, each sequence's final state in its slot, the other slots unchanged, the
inputs unchanged. Then the planted faults: the oracle without the gate, without beta and from zero
states differs from the oracle far beyond the tolerance on these shapes, and
tests/python_backends/gdn_no_gate.py (the reference without g) fails the check.
--part fla: fla_linear (fla-core 0.6.0) against the same oracle through Triton's interpreter
(TRITON_INTERPRET=1, slow: tiny shapes): GDN's fused recurrent (decode) and chunked (prefill, with
the chunk list built from the point's lengths and, without the point, by FLA), KDA's fused
recurrent in place on the pool (1 token a sequence: the indices as they are; 2-4: the indices
repeated a token) and chunk_kda; what supports() refuses, and why. Exits 77 (skipped) without
triton or fla-core 0.6.0 (`pip install --no-deps fla_core-0.6.0-py3-none-any.whl`, and einops).
No part named: both. Exits 1 on a failure, 77 where nothing could run.
Usage: python3 tests/linear_backends_cpu_test.py [--part reference|fla] [examples/python-backends]
"""
import math
import os
import sys
import time
import types

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported: FLA's kernels on the CPU
try:
    import torch
    import torch.nn.functional as F
except ImportError:
    print("no torch: skipped")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
part = "all"
if "--part" in args:
    at = args.index("--part")
    part = args[at + 1]
    del args[at:at + 2]
if part not in ("all", "reference", "fla"):
    print(f"--part reference or fla, not {part}")
    sys.exit(2)
sys.path.insert(0, args[0] if args else os.path.join(HERE, "..", "examples", "python-backends"))
sys.path.insert(0, os.path.join(HERE, "python_backends"))

EPS = 1e-6
# Tolerances: the largest |error| over the tensor, relative to the largest |value| of the float64
# reference (measured over these cases and six more seeds of each path). fp32 points: 1e-7..3e-7
# everywhere (o and states, both backends, both of FLA's paths): 5e-6. bf16 inputs where the only
# rounding is o's to bf16 (torch_linear, FLA's fused recurrent), and a bf16 pool's final states:
# half an ulp, at most 2^-8 = 3.9e-3 of the value, measured up to 3.4e-3: 6e-3. FLA's chunked
# path with bf16 inputs also stores the normalized q, k, its WY factors and the chunk states h in
# bf16: o measured up to 5.2e-3, fp32 final states up to 7.8e-3 (KDA): 1.5e-2 and 2e-2. Those
# are with the interpreter's fp32 -> bf16 casts rounded to nearest even as the GPU rounds them
# (fla_linear's shim; the interpreter itself truncates, which doubled every bf16 error). The
# planted faults below differ by 0.2 and more; PLANTED_MIN is 5x the largest tolerance.
TOL = {  # (q's dtype, path) -> (o, final states in an fp32 pool); a bf16 pool: at least BF16_POOL
    (torch.float32, "reference"): (5e-6, 5e-6), (torch.bfloat16, "reference"): (6e-3, 5e-6),
    (torch.float32, "recurrent"): (5e-6, 5e-6), (torch.bfloat16, "recurrent"): (6e-3, 5e-6),
    (torch.float32, "chunk"): (5e-6, 5e-6), (torch.bfloat16, "chunk"): (1.5e-2, 2e-2),
}
BF16_POOL = 6e-3
PLANTED_MIN = 0.1  # what a dropped gate, beta or initial state must differ by, at least
failures = []
started = time.time()


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL", what, flush=True)


# --- The float64 oracle, from docs/linear-attention.md. ------------------------------------------
def oracle(q, k, v, g, beta, pool, slots, lens, scale, gate=True, use_beta=True, initial=True):
    """o [T, Hv, dv] and the sequences' final states [B, Hv, dk, dv], float64, token by token."""
    q, k, v, g, beta = (x.double() for x in (q, k, v, g, beta))
    hk, dk, hv, dv = q.size(1), q.size(2), v.size(1), v.size(2)
    group = hv // hk
    o = torch.zeros(q.size(0), hv, dv, dtype=torch.float64)
    finals = torch.zeros(len(lens), hv, dk, dv, dtype=torch.float64)
    start = 0
    for b, n in enumerate(lens):
        for h in range(hv):
            s = (pool[slots[b], h].double().clone() if initial
                 else torch.zeros(dk, dv, dtype=torch.float64))
            for t in range(start, start + n):
                qt, kt = q[t, h // group], k[t, h // group]
                qt = qt / math.sqrt(float(qt @ qt) + EPS)
                kt = kt / math.sqrt(float(kt @ kt) + EPS)
                if gate:
                    decay = torch.exp(g[t, h])
                    s = s * (decay[:, None] if decay.dim() else decay)
                u = (beta[t, h] if use_beta else 1.0) * (v[t, h] - s.T @ kt)
                s = s + torch.outer(kt, u)
                o[t, h] = scale * (s.T @ qt)
            finals[b, h] = s
        start += n
    return o, finals


def error(got, want):
    return float((got.double() - want).abs().max() / want.abs().max().clamp_min(1e-30))


def inputs(kind, lens, hk, hv, dk, dv, dtype, state_dtype, spare=3, seed=0):
    """A packed batch as the harness hands it: q, k [T, Hk, dk], v [T, Hv, dv] in dtype; g (log
    space, <= 0: gdn [T, Hv], kda [T, Hv, dk]) and beta (0..1) float32; a pool of batch + spare
    slots in state_dtype; distinct shuffled state_indices and cu_seqlens_q int32."""
    gen = torch.Generator().manual_seed(seed)
    tokens, batch = sum(lens), len(lens)
    q = (torch.randn(tokens, hk, dk, generator=gen) * 3).to(dtype)  # raw: the op normalizes
    k = (torch.randn(tokens, hk, dk, generator=gen) * 0.5).to(dtype)
    v = torch.randn(tokens, hv, dv, generator=gen).to(dtype)
    shape = (tokens, hv, dk) if kind == "kda" else (tokens, hv)
    g = F.logsigmoid(torch.randn(shape, generator=gen) + 1.5)  # exp(g) 0.3..0.99, some lower
    beta = torch.sigmoid(torch.randn(tokens, hv, generator=gen))
    pool = torch.randn(batch + spare, hv, dk, dv, generator=gen).to(state_dtype)
    slots = torch.randperm(batch + spare, generator=gen)[:batch].to(torch.int32)
    cu = torch.tensor([0] + [sum(lens[:i + 1]) for i in range(batch)], dtype=torch.int32)
    return dict(q=q, k=k, v=v, g=g, beta=beta, state=pool, state_indices=slots, cu_seqlens_q=cu)


def problem_of(kind, lens, dtype, state_dtype, hk, hv, dk, dv, device="cpu", **extra):
    names = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16",
             torch.float8_e4m3fn: "fp8_e4m3"}
    uniform = len(set(lens)) == 1
    p = dict(kind=kind, device=device, direction="fwd", dtype=dtype, dtype_name=names[dtype],
             state_dtype=state_dtype, batch=len(lens), seq_len=lens[0] if uniform else 0,
             q_lens=[] if uniform else list(lens), kv_lens=[], heads=hv, kv_heads=hk,
             head_dim=dk, linear_num_key_heads=hk, linear_num_value_heads=hv,
             linear_key_head_dim=dk, linear_value_head_dim=dv, chunk_size=64)
    p.update(extra)
    return types.SimpleNamespace(**p)


def run_case(name, fn, kind, lens, hk, hv, dk, dv, dtype, state_dtype, path, scale=None,
             problem=True, seed=0, expect_fail=False):
    """One call of fn against the oracle: o, the final states in their slots, the other slots and
    the inputs unchanged. Returns (o error, state error)."""
    pool_dtype = torch.float32 if state_dtype == "fp32" else torch.bfloat16
    x = inputs(kind, lens, hk, hv, dk, dv, dtype, pool_dtype, seed=seed)
    scale = dk ** -0.5 if scale is None else scale
    slots = x["state_indices"].long()
    want_o, want_s = oracle(x["q"], x["k"], x["v"], x["g"], x["beta"], x["state"], slots, lens,
                            scale)
    before = {key: t.clone() for key, t in x.items()}
    kw = dict(x, scale=scale)
    if problem:
        kw["problem"] = problem_of(kind, lens, dtype, state_dtype, hk, hv, dk, dv)
    t0 = time.time()
    try:
        o = fn(**kw)
    except Exception as e:  # noqa: BLE001  (a failure of this case, named)
        check(False, f"{name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        return None
    took = time.time() - t0
    tokens = sum(lens)
    check(tuple(o.shape) == (tokens, hv, dv) and o.dtype == dtype,
          f"{name}: o {tuple(o.shape)} {o.dtype}, want {(tokens, hv, dv)} {dtype}")
    err_o = error(o, want_o)
    err_s = error(x["state"][slots], want_s)
    tol_o, tol_s = TOL[(dtype, path)]
    if pool_dtype == torch.bfloat16:
        tol_s = max(tol_s, BF16_POOL)
    others = torch.ones(x["state"].size(0), dtype=torch.bool)
    others[slots] = False
    untouched = torch.equal(x["state"][others], before["state"][others])
    print(f"{name:62s} o {err_o:.1e} (<{tol_o:.2g})  states {err_s:.1e} (<{tol_s:.2g})  "
          f"{took:5.1f} s", flush=True)
    if expect_fail:
        return err_o, err_s
    check(err_o < tol_o, f"{name}: o error {err_o:.3g} above {tol_o}")
    check(err_s < tol_s, f"{name}: final states error {err_s:.3g} above {tol_s}")
    check(untouched, f"{name}: a slot no sequence owns was changed")
    for key, t in x.items():
        if key != "state":
            check(torch.equal(t, before[key]), f"{name}: the backend changed its input {key}")
    return err_o, err_s


DECODE = [1, 1, 1, 1]  # one token a sequence
MTP = [3, 1, 4, 2]  # 1-4 tokens a sequence, ragged
PREFILL = [70, 33, 5]  # a prefill beside shorter ones


def part_reference():
    import torch_linear
    check(torch_linear.KINDS == ("gdn", "kda"), f"torch_linear.KINDS {torch_linear.KINDS!r}")
    fns = {"gdn": torch_linear.gdn_recurrent, "kda": torch_linear.kda_recurrent}
    heads = {"gdn": (2, 4), "kda": (2, 2)}  # (Hk, Hv): GDN's value heads twice its key heads
    for kind in ("gdn", "kda"):
        hk, hv = heads[kind]
        for dtype, state_dtype in ((torch.float32, "fp32"), (torch.bfloat16, "fp32"),
                                   (torch.bfloat16, "bf16")):
            for phase, lens in (("decode", DECODE), ("decode 1-4", MTP), ("prefill", PREFILL)):
                name = (f"torch_linear {kind} {phase} {str(dtype)[6:]} pool {state_dtype} "
                        f"Hk {hk} Hv {hv}")
                run_case(name, fns[kind], kind, lens, hk, hv, 32, 16, dtype, state_dtype,
                         "reference", problem=False)
        run_case(f"torch_linear {kind} prefill fp32, scale 0.3", fns[kind], kind, PREFILL, hk, hv,
                 32, 16, torch.float32, "fp32", "reference", scale=0.3, problem=False, seed=1)
        # The decode-only entry: the same recurrence at the decode points it takes.
        decode_fn = getattr(torch_linear, f"{kind}_recurrent_decode")
        for phase, lens in (("decode", DECODE), ("decode 1-4", MTP)):
            run_case(f"torch_linear {kind}_recurrent_decode {phase} bfloat16 pool fp32, scale 0.3",
                     decode_fn, kind, lens, hk, hv, 32, 16, torch.bfloat16, "fp32", "reference",
                     scale=0.3, problem=False, seed=2)
    # supports()
    base = problem_of("gdn", DECODE, torch.bfloat16, "fp32", 16, 32, 128, 128)
    for changed, want in [({}, True), ({"device": "cuda"}, True), ({"state_dtype": "bf16"}, True),
                          ({"direction": "bwd"}, "forward only"),
                          ({"dtype": torch.float8_e4m3fn, "dtype_name": "fp8_e4m3"},
                           "not fp8_e4m3"),
                          ({"state_dtype": "fp16"}, "not fp16"),
                          ({"heads": 24}, "not 24 over 16"),
                          # Under tp: the model's key heads (32) against a GPU's (8): the GPU's
                          # count (what the H100's kda rows were refused over at 7a8f47e).
                          ({"kind": "kda", "linear_num_key_heads": 32, "heads": 8, "kv_heads": 8},
                           True)]:
        got = torch_linear.supports(types.SimpleNamespace(**{**vars(base), **changed}))
        ok = got is True if want is True else isinstance(got, str) and want in got
        check(ok, f"torch_linear.supports with {changed}: {got!r}, want {want!r}")
    # The decode-only entries: 1-4 tokens a sequence, uniform or ragged, then supports()'s rules.
    for changed, want in [({}, True), ({"seq_len": 4}, True), ({"seq_len": 5}, "not 5"),
                          ({"seq_len": 0, "q_lens": [1, 4, 2]}, True),
                          ({"seq_len": 0, "q_lens": [1, 70, 2]}, "not 70"),
                          ({"direction": "bwd"}, "forward only")]:
        for fn in ("gdn_recurrent_decode", "kda_recurrent_decode"):
            supports = getattr(torch_linear, f"supports_{fn}")
            got = supports(types.SimpleNamespace(**{**vars(base), **changed}))
            ok = got is True if want is True else isinstance(got, str) and want in got
            check(ok, f"torch_linear.supports_{fn} with {changed}: {got!r}, want {want!r}")
    check(torch_linear.gdn_recurrent_decode.kinds == ("gdn",)
          and torch_linear.kda_recurrent_decode.kinds == ("kda",), "the decode entries' kinds")
    part_planted()


def part_planted():
    """The oracle without the gate, without beta, and from zero states, against the oracle on the
    shapes above: each must differ by far more than any tolerance, or a backend that dropped it
    could pass. And the planted backend tests/python_backends/gdn_no_gate.py must fail."""
    for kind, (hk, hv) in (("gdn", (2, 4)), ("kda", (2, 2))):
        for phase, lens in (("decode", DECODE), ("decode 1-4", MTP), ("prefill", PREFILL)):
            x = inputs(kind, lens, hk, hv, 32, 16, torch.bfloat16, torch.float32)
            slots = x["state_indices"].long()
            args = (x["q"], x["k"], x["v"], x["g"], x["beta"], x["state"], slots, lens, 32 ** -0.5)
            want_o, want_s = oracle(*args)
            for part_name, kw in (("gate", dict(gate=False)), ("beta", dict(use_beta=False)),
                                  ("initial_state", dict(initial=False))):
                o, s = oracle(*args, **kw)
                e_o, e_s = error(o, want_o), error(s, want_s)
                print(f"planted: {kind} {phase:10s} without {part_name:13s} o {e_o:.2f}  "
                      f"states {e_s:.2f}", flush=True)
                check(e_o > PLANTED_MIN, f"planted: {kind} {phase} without {part_name}: o differs "
                      f"by {e_o:.3g} only")
    import gdn_no_gate
    check(gdn_no_gate.KINDS == ("gdn",), f"gdn_no_gate.KINDS {gdn_no_gate.KINDS!r}")
    for phase, lens in (("decode", DECODE), ("decode 1-4", MTP), ("prefill", PREFILL)):
        got = run_case(f"gdn_no_gate (planted) {phase}", gdn_no_gate.gdn_recurrent, "gdn", lens,
                       2, 4, 32, 16, torch.bfloat16, "fp32", "reference", problem=False,
                       expect_fail=True)
        check(got is not None and got[0] > PLANTED_MIN,
              f"the planted gdn_no_gate passes the {phase} check: {got}")


def part_fla():
    """fla_linear through the interpreter. Returns False where it cannot run (skipped)."""
    try:
        import triton  # noqa: F401
    except ImportError:
        print("no triton: fla_linear skipped")
        return False
    import fla_linear
    api = fla_linear._fla()
    why = fla_linear._missing(api)
    if why:
        print(f"fla_linear skipped: {why}")
        return False
    check(fla_linear.KINDS == ("gdn", "kda"), f"fla_linear.KINDS {fla_linear.KINDS!r}")
    # Small: every interpreted program is Python. GDN: Hv = 2 Hk; dk 32 and dv 16 (not square).
    fp32, bf16 = torch.float32, torch.bfloat16
    gdn, kda = fla_linear.gdn, fla_linear.kda
    cases = [
        ("gdn decode", gdn, "gdn", [1, 1, 1], 1, 2, fp32, "fp32", "recurrent", {}),
        ("gdn decode", gdn, "gdn", [1, 1, 1], 1, 2, bf16, "bf16", "recurrent", {}),
        ("gdn decode 1-4", gdn, "gdn", [1, 4, 2], 1, 2, bf16, "fp32", "recurrent", {}),
        ("gdn decode 1-4, no problem (lengths read on the host)", gdn, "gdn", [3, 1], 1, 2, fp32,
         "fp32", "recurrent", dict(problem=False)),
        ("gdn prefill (chunk list from the point's lengths)", gdn, "gdn", [70, 5, 20], 1, 2, fp32,
         "fp32", "chunk", {}),
        ("gdn prefill", gdn, "gdn", [70, 5, 20], 1, 2, bf16, "bf16", "chunk", {}),
        ("gdn prefill, no problem (FLA's chunk list)", gdn, "gdn", [66, 7], 1, 2, bf16, "fp32",
         "chunk", dict(problem=False, seed=2)),
        ("gdn decode in place (KDA's kernel, g widened)", fla_linear.gdn_inplace, "gdn",
         [1, 1, 1], 1, 2, fp32, "fp32", "recurrent", {}),
        ("gdn decode 1-4 in place (KDA's kernel, g widened)", fla_linear.gdn_inplace, "gdn",
         [1, 4, 2], 1, 2, bf16, "bf16", "recurrent", {}),
        ("kda decode (in place, 1-D indices)", kda, "kda", [1, 1, 1], 2, 2, fp32, "fp32",
         "recurrent", {}),
        ("kda decode (in place, 1-D indices)", kda, "kda", [1, 1, 1], 2, 2, bf16, "bf16",
         "recurrent", {}),
        ("kda decode 1-4 (in place, indices a token)", kda, "kda", [1, 4, 2], 2, 2, bf16, "fp32",
         "recurrent", {}),
        ("kda decode 1-4 (in place, indices a token)", kda, "kda", [2, 3], 2, 2, fp32, "bf16",
         "recurrent", dict(seed=3)),
        ("kda prefill (use_graph chunk list)", kda, "kda", [70, 5], 2, 2, fp32, "fp32", "chunk",
         {}),
        ("kda prefill (use_graph chunk list)", kda, "kda", [70, 5], 2, 2, bf16, "bf16", "chunk",
         {}),
        ("kda prefill, scale 0.3", kda, "kda", [9, 40], 2, 2, bf16, "fp32", "chunk",
         dict(scale=0.3, seed=4)),
    ]
    for name, fn, kind, lens, hk, hv, dtype, state_dtype, path, extra in cases:
        name = f"fla {name} {str(dtype)[6:]} pool {state_dtype}"
        run_case(name, fn, kind, lens, hk, hv, 32, 16, dtype, state_dtype, path, **extra)

    # What the KDA decode works around: FLA's in-place kernel puts token i's state at
    # ssm_state_indices[b * stride(0) + i], so 1-D indices with 2 tokens a sequence write
    # sequence 0's second state into sequence 1's slot, and the last sequence's past the end of
    # the indices (here a spare slot's entry placed after them: without it the store goes out of
    # bounds, which crashed this process).
    x = inputs("kda", [2, 2], 2, 2, 32, 16, fp32, fp32, seed=5)
    pool = x["state"].clone()
    slots = x["state_indices"]
    spare = [s for s in range(pool.size(0)) if s not in slots.tolist()][0]
    past = torch.cat([slots, torch.tensor([spare], dtype=slots.dtype)])
    api["recurrent_kda"](q=x["q"][None], k=x["k"][None], v=x["v"][None], g=x["g"][None],
                         beta=x["beta"][None], scale=32 ** -0.5, initial_state=pool,
                         inplace_final_state=True, cu_seqlens=x["cu_seqlens_q"].long(),
                         ssm_state_indices=past[:2], use_qk_l2norm_in_kernel=True)
    _, want_s = oracle(x["q"], x["k"], x["v"], x["g"], x["beta"], x["state"], slots.long(),
                       [2, 2], 32 ** -0.5)
    e = error(pool[slots.long()], want_s)
    print(f"FLA's in-place KDA decode with 1-D indices, 2 tokens a sequence: states {e:.2f} off "
          f"(the backend's [batch, tokens] indices avoid it)", flush=True)
    check(e > PLANTED_MIN, f"1-D indices with 2 tokens a sequence came out right ({e:.3g}): "
          f"the [batch, tokens] workaround in fla_linear.kda may no longer be needed")

    # The longest sequence read on the host where the point does not say: none in an empty batch.
    check(fla_linear._max_tokens(None, torch.tensor([0], dtype=torch.int32)) == 0,
          "an empty batch's longest sequence")
    check(fla_linear._max_tokens(None, torch.tensor([0, 3, 10, 11], dtype=torch.int32)) == 7,
          "the longest of 3, 7 and 1 tokens")
    check(fla_linear._max_tokens([2, 9], torch.tensor([0, 3], dtype=torch.int32)) == 9,
          "the point's lengths before the offsets")

    # supports(): what it refuses, and why.
    base = problem_of("gdn", [4096], bf16, "fp32", 16, 32, 128, 128, device="cuda")
    decode = dict(seq_len=1)
    for changed, want in [
            ({}, True), ({"device": "cpu"}, True), ({"state_dtype": "bf16"}, True),
            ({"kind": "kda", "linear_num_key_heads": 32}, True), ({"chunk_size": 32}, True),
            ({"dtype": torch.float32, "dtype_name": "fp32"}, True),
            ({"direction": "bwd"}, "forward only"),
            ({"dtype": torch.float8_e4m3fn, "dtype_name": "fp8_e4m3"}, "not fp8_e4m3"),
            ({"state_dtype": "fp16"}, "not fp16"),
            ({"linear_key_head_dim": 512, "head_dim": 512}, "at most 256"),
            ({"linear_key_head_dim": 512, "head_dim": 512, **decode}, True),
            ({"linear_value_head_dim": 8}, "16 at least"),
            ({"chunk_size": 128}, "not 128"), ({"chunk_size": 16}, True),
            ({"kind": "kda", "chunk_size": 16}, "not 16"),
            ({"chunk_size": 128, **decode}, True),
            ({"heads": 24}, "not 24 over 16"),
            ({"kind": "kda", "linear_num_key_heads": 32, "heads": 8, "kv_heads": 8}, True)]:
        got = fla_linear.supports(types.SimpleNamespace(**{**vars(base), **changed}))
        ok = got is True if want is True else isinstance(got, str) and want in got
        check(ok, f"fla_linear.supports with {changed}: {got!r}, want {want!r}")
    del os.environ["TRITON_INTERPRET"]
    got = fla_linear.supports(types.SimpleNamespace(**{**vars(base), "device": "cpu"}))
    check(isinstance(got, str) and "CUDA points only" in got, f"a CPU point uninterpreted: {got!r}")
    os.environ["TRITON_INTERPRET"] = "1"
    saved = fla_linear._fla_api
    fla_linear._fla_api = ImportError("No module named 'fla'", name="fla")
    got = fla_linear.supports(base)
    check(got == "fla-core 0.6.0 not installed: carry its wheel (pip install --no-deps)",
          f"no fla: {got!r}")
    try:
        gdn(**inputs("gdn", [1], 1, 2, 32, 16, fp32, fp32), scale=0.2)
        check(False, "no fla: the call did not raise")
    except NotImplementedError as e:  # the harness's `unsupported`, with the reason
        check("not installed" in str(e), f"no fla: the call says {e}")
    fla_linear._fla_api = ImportError("No module named 'einops'", name="einops")
    got = fla_linear.supports(base)
    check(isinstance(got, str) and "einops" in got, f"fla without einops: {got!r}")
    fla_linear._fla_api = dict(saved, version="0.5.1")
    got = fla_linear.supports(base)
    check(isinstance(got, str) and "not 0.5.1" in got, f"another fla-core: {got!r}")
    fla_linear._fla_api = saved
    return True


ran = []
if part in ("all", "reference"):
    part_reference()
    ran.append("reference")
if part in ("all", "fla"):
    if part_fla():
        ran.append("fla")
print(f"{time.time() - started:.1f} s")
if not ran:
    print("nothing ran: skipped")
    sys.exit(77)
print("\n".join(failures) or f"all match ({', '.join(ran)})")
sys.exit(1 if failures else 0)
