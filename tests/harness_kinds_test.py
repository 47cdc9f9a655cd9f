"""core/src/python/harness.py's load(): the kinds a Python backend runs, read from the function's
`kinds` attribute, else the module's KINDS, else the default; a value that is no kind's name (nor a
list of them) refused with a message naming where it was read (`kinds` or `KINDS`) and what it held.

    python3 tests/harness_kinds_test.py [HARNESS_DIR]

Exits 1 naming each failure, 0 when all hold.
"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else
                os.path.join(HERE, "..", "core", "src", "python"))
import harness  # noqa: E402

failures = []
harness.DEFAULT_KINDS = ("attention",)  # what the bridge sets: the list's first kind
with tempfile.TemporaryDirectory() as d:
    def load(name, body):
        path = os.path.join(d, name + ".py")
        with open(path, "w") as f:
            f.write(body)
        return harness.load(path.encode(), "attention")

    fn = "def attention(q, k, v, causal):\n    return q\n"
    cases = [  # (module, body, kinds wanted, or the words of the refusal)
        ("plain", fn, list(harness.DEFAULT_KINDS), None),
        ("own", fn + "attention.kinds = 'mla'\n", ["mla"], None),
        ("module", "KINDS = ('dsa', 'mla')\n" + fn, ["dsa", "mla"], None),
        ("both", "KINDS = ['dsa']\n" + fn + "attention.kinds = ['mla']\n", ["mla"], None),
        ("own-bad", fn + "attention.kinds = 5\n", None, "kinds is a problem kind's name or a list of them (docs/kinds.md), not 5"),
        ("own-mixed", fn + "attention.kinds = ['mla', 3]\n", None, "kinds is a problem kind's name"),
        ("module-bad", "KINDS = 7\n" + fn, None, "KINDS is a problem kind's name or a list of them (docs/kinds.md), not 7"),
    ]
    for name, body, kinds, words in cases:
        got = load(name, body)
        if words is None:
            if isinstance(got, str) or list(got[4]) != kinds:
                failures.append(f"{name}: want kinds {kinds}, got {got if isinstance(got, str) else got[4]}")
        elif not isinstance(got, str) or words not in got:
            failures.append(f"{name}: want a refusal with {words!r}, got {got!r}")
        elif name.startswith("own") and "KINDS is" in got:
            failures.append(f"{name}: the function's kinds called the module's KINDS: {got}")

print("\n".join(failures) if failures else "ok")
sys.exit(1 if failures else 0)
