"""attnbench's side of a Python backend, run in the worker's embedded CPython.

The bridge (bridge.cpp) imports this once, then: load() imports the user's module, describe()
turns an exception into one line that names the user's frame, problem() makes the small object
a backend's supports() and function see. The timed call itself goes from C++ straight to the
user's function: nothing of this module runs inside it.
"""
import importlib.util
import inspect
import os
import sys
import traceback
import types

import torch

# What a backend's function may take besides q, k, v: it gets those its signature names. Set by
# the bridge when it starts: the common keywords, each variant's and each kind's (the lists in
# core/src/kinds/list.hpp; docs/backends.md).
KEYWORDS = ()
# The kinds a function runs that names none: the first of the list (set by the bridge too).
DEFAULT_KINDS = ()

_modules = {}  # path -> module: two functions of one file share one import


def _module(path):
    if path not in _modules:
        folder = os.path.dirname(path)
        if folder not in sys.path:
            sys.path.insert(0, folder)  # the module's own helpers import as they would
        stem = os.path.splitext(os.path.basename(path))[0]
        name = f"attnbench_backend_{len(_modules)}_{stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        _modules[path] = module
    return _modules[path]


def load(path, function):
    """(function, supports or None, description, keywords it takes, problem kinds it runs), or a
    str: what is missing. The kinds: the function's `kinds` attribute, else the module's KINDS,
    else the list's first kind (DEFAULT_KINDS); a point of another kind is refused before supports() is asked. `path`
    comes as bytes, decoded as the file system does (a name that is not UTF-8 keeps its bytes)."""
    path = os.fsdecode(path)
    module = _module(path)
    fn = getattr(module, function, None)
    if not callable(fn):
        have = sorted(n for n, v in vars(module).items()
                      if inspect.isfunction(v) and v.__module__ == module.__name__
                      and not n.startswith("_"))
        return (f"{os.path.relpath(path)} defines no function '{function}'"
                f" (it defines: {', '.join(have) or 'none'})")
    supports = getattr(module, f"supports_{function}", None) or getattr(module, "supports", None)
    if supports is not None and not callable(supports):
        supports = None
    doc = (inspect.getdoc(fn) or "").strip().splitlines()
    description = doc[0] if doc else f"python {os.path.relpath(path)}:{function}"
    where = "kinds" if getattr(fn, "kinds", None) is not None else "KINDS"
    kinds = getattr(fn, "kinds", None) or getattr(module, "KINDS", None) or DEFAULT_KINDS
    if isinstance(kinds, str):
        kinds = (kinds,)
    try:
        kinds = list(kinds)
    except TypeError:
        kinds = None
    if kinds is None or not kinds or not all(isinstance(k, str) for k in kinds):
        return (f"{os.path.relpath(path)}: {where} is a problem kind's name or a list of them "
                f"(docs/kinds.md), not {getattr(fn, 'kinds', None) or getattr(module, 'KINDS', None)!r}")
    return fn, supports, description, _keywords(fn), kinds


def _keywords(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin or a compiled function: give it everything
        return list(KEYWORDS)
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return list(KEYWORDS)
    names = {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    return [k for k in KEYWORDS if k in names]


DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32,
          "fp8_e4m3": torch.float8_e4m3fn}


def problem(**fields):
    """The row's problem: every field of core/src/kinds/problem.cpp's table by its name (the bridge
    passes them all), dtype as a torch dtype (its name in dtype_name), group_size, the drawn
    lengths q_lens and kv_lens (lists; empty: uniform), the variants' attributes (a window's
    window_left and window_right: ints, -1 unbounded, right 0 under causal) and packed (ragged
    or paged: q is [total_q, heads, dim])."""
    p = types.SimpleNamespace(**fields)
    p.dtype_name, p.dtype = p.dtype, DTYPES[p.dtype]
    p.group_size = p.heads // p.kv_heads
    p.packed = bool(p.q_lens or p.kv_lens) or p.kv_layout == "paged"
    return p


def describe(exc, path):
    """'TypeError at flex.py:12 (attention): message', the frame the innermost of the user's."""
    path = os.fsdecode(path)
    frames = traceback.extract_tb(exc.__traceback__)
    folder = os.path.dirname(path) + os.sep
    mine = [f for f in frames if os.path.abspath(f.filename).startswith(folder)]
    where = ""
    if isinstance(exc, SyntaxError) and exc.filename:  # no frame of its own: it never ran
        where = f" at {os.path.relpath(exc.filename)}:{exc.lineno}"
    elif mine or frames:
        f = (mine or frames)[-1]
        where = f" at {os.path.relpath(f.filename)}:{f.lineno} ({f.name})"
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}{where}: {lines[0] if lines else '(no message)'}"
