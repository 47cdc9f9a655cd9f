"""The linear-attention kinds `gdn` (gated delta-net) and `kda` (Kimi delta attention) through
flash-linear-attention's Triton kernels, fla-core 0.6.0 (PyPI `fla-core`, `import fla`), for
attnbench: the contract of docs/linear-attention.md (q, k L2-normalized in the kernel, a pool of
states [slots, Hv, dk, dv] read at state_indices and updated in place, o after each update).

Which kernel. A decode, at most DECODE_MAX = 4 tokens in every sequence (1, or 2-4 with
multi-token prediction), runs FLA's fused recurrent kernel (one program a sequence, value head and
block of value columns, the state in registers, token after token); anything longer, a mixed batch
with one long sequence included, runs FLA's chunked algorithm (chunks of `chunk_size`, 64 by
default). The longest sequence is read from the point (problem.q_lens, else seq_len); called
without `problem`, from cu_seqlens_q on the host (a synchronization in the call).

GDN (Qwen3-Next, Qwen3.5):
    fla.ops.gated_delta_rule.fused_recurrent_gated_delta_rule(q, k, v, g, gk=None, gv=None,
        beta, scale, initial_state, output_final_state=True, use_qk_l2norm_in_kernel=True,
        cu_seqlens=cu)                                   (decode)
    fla.ops.gated_delta_rule.chunk_gated_delta_rule(q, k, v, g, beta, scale, initial_state,
        output_final_state=True, use_qk_l2norm_in_kernel=True, cu_seqlens=cu,
        chunk_indices=..., chunk_size=...)              (prefill)
  q, k [1, T, Hk, dk], v [1, T, Hv, dv], g and beta [1, T, Hv] (views, no copy). Both take
  Hv > Hk in 0.6.0 (value head h reads key head h // (Hv / Hk)): q and k are never repeated.
  Neither has an in-place path in 0.6.0 (no state indices): the call gathers the sequences'
  states, state.index_select(0, slots) (a copy of batch states, in the pool's dtype, which both
  kernels widen to fp32 as they load it), the kernel returns the final states as a new fp32
  tensor, and index_copy_ scatters them back (cast to the pool's dtype first where it is bf16):
  each state crosses memory about three times where an in-place kernel reads and writes it once.
  That is what FLA 0.6.0 costs an engine that keeps a pool, and it is counted.
KDA (Kimi Linear):
    fla.ops.kda.fused_recurrent.fused_recurrent_kda_fwd(q, k, v, g, beta, scale,
        initial_state=state, inplace_final_state=True, cu_seqlens=cu,
        ssm_state_indices=idx, use_qk_l2norm_in_kernel=True)    (decode: in place)
    fla.ops.kda.chunk_kda(q, k, v, g, beta, scale, initial_state, output_final_state=True,
        use_qk_l2norm_in_kernel=True, cu_seqlens=cu, use_graph=True, chunk_size=...)  (prefill)
  g [1, T, Hv, dk]. The in-place decode is fused_recurrent_kda_fwd, the function the public
  fused_recurrent_kda wraps: the wrapper passes inplace_final_state=False and swallows
  ssm_state_indices in **kwargs, so it cannot be used for a pool. The kernel reads each
  sequence's state at ssm_state_indices and, in this continuous-batching mode, stores the state
  after every token at ssm_state_indices[b * stride(0) + i] (one slot a token: vLLM's speculative
  decoding). One token a sequence: state_indices as they are (1-D). 2-4 tokens: a [batch, m]
  copy of the indices, each row the sequence's slot m times (m the longest sequence), so that
  every token's state lands in the sequence's own slot and the last is the final one; such a
  decode writes the state m times. (1-D indices with more than one token a sequence put token
  i's state in sequence b + i's slot, and make the last sequence read an index past the end of
  the indices and store a state wherever that points: out of bounds.) chunk_kda asserts an fp32
  initial_state: the gathered states are widened where the pool is bf16 (a second small copy)
  and scattered back with index_copy_ as for GDN. use_graph=True is FLA's sync-free chunk list
  (built on the device, padded to ceil(T/chunk) + batch - 1 chunks whose extra ones return at
  once): chunk_kda takes no chunk_indices, and without use_graph FLA reads the lengths on the
  host (repeat_interleave over a CUDA tensor), a synchronization each call.

What else the call does, inside the timed call: cu_seqlens_q (int32) converted to the int64 FLA
wants, and state_indices to int64 for index_copy_ (small kernels each call); for GDN's chunk the
chunk list ([chunks, 2]: sequence, chunk within it) built on the device from the point's lengths
(a few small kernels, no synchronization; FLA's own would read them on the host), without the
point's lengths FLA's own (one synchronization). o: FLA's output in q's dtype, [T, Hv, dv] (a
view). FLA normalizes q and k with x / sqrt(sum x^2 + 1e-6), as the contract does; its chunk path
stores the normalized q, k in their dtype (bf16 rounded once more than the recurrence), and its
chunk states h in q's dtype; both carry the running state in fp32. fp32 inputs: the chunk
kernels' tl.dot run at Triton's default precision (tf32 on the GPU).

FLA's dispatch: with fla-core alone (--no-deps) FLA's own Triton kernels run. Where `flash_qla`
is importable on sm90/sm100/sm120 and dk = dv = 128, FLA 0.6.0 hands chunk_gated_delta_rule to
FlashQLA (TileLang) instead (FLA_FLASH_QLA=0 keeps Triton); no other forward here is dispatched
(FlashKDA, registered for chunk_kda, needs use_gate_in_kernel: this contract's g is already
activated; FLA's other registered forwards are Ascend's).

Refused (supports): CPU points unless TRITON_INTERPRET=1 (Triton's interpreter: tests), backward
(an inference step: the pool is overwritten in place; FLA's fused recurrent kernels have no
backward), fp8 inputs, a state_dtype other than fp32 and bf16, dk or dv below 16 (tl.dot's
smallest tile), dk above 256 where the chunk path runs (FLA's chunk kernels hold at most 256 key
features), value heads not a multiple of the key heads, a chunk_size FLA does not take (GDN 16,
32, 64; KDA 32, 64), and a machine without fla-core 0.6.0 (`pip install --no-deps
fla_core-0.6.0-py3-none-any.whl`; its import also needs einops, pure Python).

Under TRITON_INTERPRET=1 (tests/linear_backends_cpu_test.py) the first use patches Triton's
interpreter, process-wide, where it cannot run FLA's kernels as they are (Triton 3.6, NumPy 2.4):
autotuned kernels take their first config without timing (the interpreter has no driver to time
with), a loaded scalar converts to a Python int where a loop bound needs it (NumPy 2.4 refuses
int() of a one-element array), the variable of a `for ... in range(...)` loop is a Triton scalar
as compiled code has it (FLA calls .to() on it), tl.dot widens bf16 tiles to fp32 (the
interpreter holds bf16 as raw uint16 and would multiply those), and fp32 -> bf16 casts round to
nearest even as the GPU's do (the interpreter truncates: twice the error). See
_interpreter_shims(). What runs interpreted: all four paths (GDN fused recurrent and chunk, KDA
fused recurrent in place and chunk_kda with use_graph), a prefill of 70 tokens in a few seconds.
"""
import os

import torch

KINDS = ("gdn", "kda")
VERSION = "0.6.0"
DECODE_MAX = 4  # tokens a sequence at most for the fused recurrent kernel; more: chunked
CHUNK_SIZES = {"gdn": (16, 32, 64), "kda": (32, 64)}
_NOT_LOADED = object()
_fla_api = _NOT_LOADED  # a dict of FLA's functions, or the exception their import raised


def _interpreting():
    return os.environ.get("TRITON_INTERPRET") == "1"


def _interpreter_shims():
    """Make Triton's interpreter (TRITON_INTERPRET=1) run FLA 0.6.0's kernels: see the module
    docstring. Process-wide, idempotent; must run before the first FLA kernel is interpreted (the
    interpreter caches each kernel's rewritten source)."""
    import ast

    import numpy as np
    import triton.language as tl
    from triton.runtime import autotuner, interpreter

    if getattr(interpreter, "_attnbench_fla_shims", False):
        return
    # No driver to time configs with: every config "takes" 0 (the first is chosen), no disk cache.
    autotuner.Autotuner._bench = lambda self, *args, config, **kwargs: [0.0, 0.0, 0.0]
    autotuner.Autotuner.check_disk_cache = lambda self, key, configs, bench: (bench(), False)[1]
    # A scalar loaded through a pointer is a one-element array: int() of it, for range() bounds.
    patch_tensor = interpreter._patch_lang_tensor

    def _index(self):
        data = np.asarray(self.handle.data)
        return int(data.reshape(-1)[0]) if data.size == 1 else int(data)

    def _patch_lang_tensor(tensor, scope):
        patch_tensor(tensor, scope)
        scope.set_attr(tensor, "__index__", _index)

    interpreter._patch_lang_tensor = _patch_lang_tensor

    # `for i in range(n)`: i a Triton scalar, as compiled (FLA's kernels call i.to(tl.int64)).
    def visit_For(self, node):
        self.generic_visit(node)
        it = node.iter
        if (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                and isinstance(node.target, ast.Name)):
            name = node.target.id
            node.body.insert(0, ast.Assign(
                targets=[ast.Name(id=name, ctx=ast.Store())],
                value=ast.Call(func=ast.Attribute(value=ast.Name(id="interpreter_semantic",
                                                                 ctx=ast.Load()),
                                                  attr="to_tensor", ctx=ast.Load()),
                               args=[ast.Name(id=name, ctx=ast.Load()), ast.Constant(value=False)],
                               keywords=[])))
        return node

    interpreter.ASTTransformer.visit_For = visit_For
    # tl.dot of bf16 tiles: widened to fp32 (exact), as the tensor cores multiply them.
    create_dot = interpreter.InterpreterBuilder.create_dot

    def _widen(x):
        if x.dtype == tl.bfloat16:
            return interpreter.TensorHandle((x.data.astype(np.uint32) << 16).view(np.float32),
                                            tl.float32)
        return x

    def dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        return create_dot(self, _widen(a), _widen(b), d, input_precision, max_num_imprecise_acc)

    interpreter.InterpreterBuilder.create_dot = dot
    # fp32 -> bf16 rounded to nearest even, as the GPU's cvt (the interpreter truncates).
    cast_impl = interpreter.InterpreterBuilder.cast_impl

    def cast(self, src, dst_type):
        if src.dtype.scalar == tl.float32 and dst_type.scalar == tl.bfloat16:
            rounded = torch.from_numpy(np.ascontiguousarray(src.data, dtype=np.float32))
            bits = rounded.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
            return interpreter.TensorHandle(bits, dst_type.scalar)
        return cast_impl(self, src, dst_type)

    interpreter.InterpreterBuilder.cast_impl = cast
    interpreter._attnbench_fla_shims = True


def _fla():
    """FLA's functions, imported at first use (so this file imports where fla is not), or the
    exception the import raised."""
    global _fla_api
    if _fla_api is _NOT_LOADED:
        try:
            if _interpreting():
                _interpreter_shims()
            import fla
            from fla.ops.gated_delta_rule import (chunk_gated_delta_rule,
                                                  fused_recurrent_gated_delta_rule)
            from fla.ops.kda import chunk_kda
            from fla.ops.kda.fused_recurrent import fused_recurrent_kda_fwd
            _fla_api = dict(version=getattr(fla, "__version__", "?"),
                            chunk_gdn=chunk_gated_delta_rule,
                            recurrent_gdn=fused_recurrent_gated_delta_rule,
                            chunk_kda=chunk_kda, recurrent_kda=fused_recurrent_kda_fwd)
        except Exception as e:  # ImportError (no fla, no einops); whatever its import raises
            _fla_api = e
    return _fla_api


def _missing(api):
    """Why FLA cannot be used, or None."""
    if isinstance(api, Exception):
        if isinstance(api, ImportError) and getattr(api, "name", None) == "fla":
            return "fla-core 0.6.0 not installed: carry its wheel (pip install --no-deps)"
        first = str(api).splitlines()[0] if str(api) else ""
        return (f"fla-core 0.6.0 does not import ({type(api).__name__}: {first}): carry its wheel "
                f"(pip install --no-deps) and einops")
    if api["version"] != VERSION:
        return f"fla-core {VERSION} (its APIs as this file reads them), not {api['version']}"
    return None


def _lengths(problem, tokens, batch):
    """The sequences' token counts as the point has them on the host (q_lens, else seq_len a
    sequence), or None where the point does not say or disagrees with the tensors."""
    if problem is None:
        return None
    lens = list(getattr(problem, "q_lens", None) or [])
    if not lens:
        seq_len = getattr(problem, "seq_len", 0) or 0
        lens = [seq_len] * batch
    lens = [int(n) for n in lens]
    return lens if len(lens) == batch and sum(lens) == tokens else None


def _problem_max_tokens(problem):
    lens = list(getattr(problem, "q_lens", None) or [])
    return max(lens) if lens else int(getattr(problem, "seq_len", 0) or 0)


def supports(problem):
    if problem.device != "cuda" and not _interpreting():
        return "FLA's Triton kernels: CUDA points only (CPU ones under TRITON_INTERPRET=1)"
    if getattr(problem, "direction", "fwd") != "fwd":
        return ("forward only (an inference step: the state pool is overwritten in place; FLA's "
                "fused recurrent kernels have no backward)")
    dtype = getattr(problem, "dtype_name", None) or str(problem.dtype).replace("torch.", "")
    if problem.dtype not in (torch.bfloat16, torch.float16, torch.float32):
        return f"q, k, v in bf16, fp16 or fp32 (FLA's kernels), not {dtype}"
    state_dtype = getattr(problem, "state_dtype", "fp32") or "fp32"
    if state_dtype not in ("fp32", "bf16"):
        return f"a state pool in fp32 or bf16, not {state_dtype}"
    kind = getattr(problem, "kind", "gdn")
    dk = getattr(problem, "linear_key_head_dim", 0) or getattr(problem, "head_dim", 0) or 0
    dv = getattr(problem, "linear_value_head_dim", 0) or getattr(problem, "head_dim_v", 0) or dk
    if dk and dk < 16 or dv and dv < 16:
        return f"key and value widths of 16 at least (tl.dot's smallest tile), not {dk}/{dv}"
    # A GPU's heads (the model's linear_num_* divided by tp:): kv_heads the key heads, heads the
    # value heads (kda has no value-head field of its own).
    hk, hv = getattr(problem, "kv_heads", 0), getattr(problem, "heads", 0)
    if hk and hv and hv % hk:
        return f"value heads a multiple of the key heads (FLA's GVA), not {hv} over {hk}"
    if _problem_max_tokens(problem) > DECODE_MAX:  # the chunked path
        if dk > 256:
            return f"at most 256 key features in FLA's chunk kernels, not {dk}"
        chunk = int(getattr(problem, "chunk_size", 64) or 64)
        if chunk not in CHUNK_SIZES.get(kind, (64,)):
            return (f"chunk_size {' or '.join(map(str, CHUNK_SIZES.get(kind, (64,))))} "
                    f"(FLA's {kind} chunk kernels), not {chunk}")
    why = _missing(_fla())
    return why or True


def _api():
    api = _fla()
    why = _missing(api)
    if why:
        raise NotImplementedError(why)
    return api


def _max_tokens(lens, cu_seqlens_q):
    """The longest sequence's tokens: the point's, else read on the host (a synchronization)."""
    if lens is not None:
        return max(lens, default=0)
    if cu_seqlens_q.numel() < 2:
        return 0
    return int((cu_seqlens_q[1:] - cu_seqlens_q[:-1]).max().item())


def _chunk_size(problem, kind):
    chunk = int(getattr(problem, "chunk_size", 64) or 64) if problem is not None else 64
    if chunk not in CHUNK_SIZES[kind]:
        raise NotImplementedError(f"chunk_size {CHUNK_SIZES[kind]} for FLA's {kind}, not {chunk}")
    return chunk


def chunk_list(cu, lens, chunk):
    """FLA's chunk list for a varlen batch, [chunks, 2] int64 (the sequence, the chunk within it),
    built on cu's device without a synchronization: the count of chunks comes from the host's
    lengths."""
    total = sum(-(-n // chunk) for n in lens)
    counts = torch.div(cu[1:] - cu[:-1] + (chunk - 1), chunk, rounding_mode="floor")
    seq = torch.repeat_interleave(torch.arange(counts.numel(), device=cu.device), counts,
                                  output_size=total)
    first = torch.cumsum(counts, 0) - counts
    within = torch.arange(total, device=cu.device) - first[seq]
    return torch.stack([seq, within], 1)


def _check(q, k, v, g, state, kind):
    hk, hv = q.size(1), v.size(1)
    if hv % hk:
        raise NotImplementedError(f"value heads a multiple of the key heads, not {hv} over {hk}")
    if state.dtype not in (torch.float32, torch.bfloat16):
        raise NotImplementedError(f"a state pool in fp32 or bf16, not {state.dtype}")
    if (g.dim() == 3) != (kind == "kda"):
        raise ValueError(f"{kind}: g {tuple(g.shape)}")


def gdn(q, k, v, g, beta, state, state_indices, cu_seqlens_q, scale, problem=None):
    """gated delta-net, fla-core 0.6.0: fused recurrent (<= 4 tokens) or chunk, states gathered

    Decode (every sequence at most DECODE_MAX tokens): fused_recurrent_gated_delta_rule; else
    chunk_gated_delta_rule. Either way the sequences' states are gathered from the pool and the
    final ones scattered back with index_copy_ (FLA 0.6.0's GDN has no in-place path)."""
    api = _api()
    _check(q, k, v, g, state, "gdn")
    tokens, batch = q.size(0), state_indices.size(0)
    lens = _lengths(problem, tokens, batch)
    cu = cu_seqlens_q.to(torch.int64)
    slots = state_indices.to(torch.int64)
    h0 = state.index_select(0, slots)
    if _max_tokens(lens, cu_seqlens_q) <= DECODE_MAX:
        o, final = api["recurrent_gdn"](
            q[None], k[None], v[None], g=g[None], beta=beta[None], scale=float(scale),
            initial_state=h0, output_final_state=True, use_qk_l2norm_in_kernel=True,
            cu_seqlens=cu)
    else:
        chunk = _chunk_size(problem, "gdn")
        indices = chunk_list(cu, lens, chunk) if lens is not None else None
        o, final = api["chunk_gdn"](
            q[None], k[None], v[None], g[None], beta[None], scale=float(scale),
            initial_state=h0, output_final_state=True, use_qk_l2norm_in_kernel=True,
            cu_seqlens=cu, chunk_indices=indices, chunk_size=chunk)
    state.index_copy_(0, slots, final.to(state.dtype))
    return o[0].to(q.dtype)


def kda(q, k, v, g, beta, state, state_indices, cu_seqlens_q, scale, problem=None):
    """Kimi delta attention, fla-core 0.6.0: fused recurrent in place (<= 4 tokens) or chunk_kda

    Decode: fused_recurrent_kda_fwd(inplace_final_state=True, ssm_state_indices=...), the pool
    updated by the kernel; else chunk_kda(use_graph=True), states gathered (fp32) and scattered."""
    api = _api()
    _check(q, k, v, g, state, "kda")
    tokens, batch = q.size(0), state_indices.size(0)
    lens = _lengths(problem, tokens, batch)
    cu = cu_seqlens_q.to(torch.int64)
    most = _max_tokens(lens, cu_seqlens_q)
    if most <= DECODE_MAX:
        if not state.is_contiguous():
            raise NotImplementedError("a contiguous state pool (the kernel addresses it by slot)")
        # Each token's state goes to index [b * stride(0) + i]: one column a token (see above).
        idx = state_indices
        if most > 1:
            idx = state_indices[:, None].expand(batch, most).contiguous()
        o, _ = api["recurrent_kda"](
            q=q[None].contiguous(), k=k[None].contiguous(), v=v[None].contiguous(),
            g=g[None].contiguous(), beta=beta[None].contiguous(), scale=float(scale),
            initial_state=state, inplace_final_state=True, cu_seqlens=cu,
            ssm_state_indices=idx, use_qk_l2norm_in_kernel=True)
        return o[0].to(q.dtype)
    slots = state_indices.to(torch.int64)
    h0 = state.index_select(0, slots).to(torch.float32)  # chunk_kda asserts fp32 (no copy if fp32)
    o, final = api["chunk_kda"](
        q[None], k[None], v[None], g[None], beta[None], scale=float(scale), initial_state=h0,
        output_final_state=True, use_qk_l2norm_in_kernel=True, cu_seqlens=cu, use_graph=True,
        chunk_size=_chunk_size(problem, "kda"))
    state.index_copy_(0, slots, final.to(state.dtype))
    return o[0].to(q.dtype)


def gdn_inplace(q, k, v, g, beta, state, state_indices, cu_seqlens_q, scale, problem=None):
    """gated delta-net's decode in place, through FLA 0.6.0's KDA recurrent kernel (prefill: gdn)

    GDN is KDA with one decay for every key channel: a decode (<= DECODE_MAX tokens a sequence)
    runs fused_recurrent_kda_fwd(inplace_final_state=True, ssm_state_indices=...) with g widened
    to [T, Hv, dk] (each head's decay repeated over its key channels, a copy of T x Hv x dk
    floats) and q, k repeated to the value heads where Hv > Hk (the KDA kernel has one key head a
    value head): the pool is read and written once, in place, as an engine's own GDN decode
    kernel does (vLLM's), not gathered and scattered. Anything longer runs gdn() above."""
    tokens, batch = q.size(0), state_indices.size(0)
    lens = _lengths(problem, tokens, batch)
    if _max_tokens(lens, cu_seqlens_q) > DECODE_MAX:
        return gdn(q, k, v, g, beta, state, state_indices, cu_seqlens_q, scale, problem)
    _check(q, k, v, g, state, "gdn")
    group = v.size(1) // q.size(1)
    if group > 1:
        q, k = q.repeat_interleave(group, 1), k.repeat_interleave(group, 1)
    wide = g.unsqueeze(-1).expand(*g.shape, q.size(-1))
    return kda(q, k, v, wide, beta, state, state_indices, cu_seqlens_q, scale, problem)


gdn.kinds = ("gdn",)
gdn_inplace.kinds = ("gdn",)
kda.kinds = ("kda",)
