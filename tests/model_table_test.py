"""tools/model_table.py's labels: a point is a decode when each sequence brings 1-16 queries
against a longer cache (17 queries, a square point or a drawn seq_lens without seq_lens_kv is a
prefill), however the lengths are written (a mix of one part, `4*1`, is a decode; a '+' inside a
histogram file's name is no mix), a decode of several queries says how many, and a column that
differs between a report's points is named. A mix of prefills and decodes is `mixed`; sinks, a
chunk and an fp8 cache are named. Run by ctest (Tools.ModelTableNamesThePhaseAndWhatVaries);
tests/tools_abuse_test.py checks what the tools refuse."""
import sys

sys.path.insert(0, sys.argv[1])  # tools/
from model_table import phase, shape, varying_columns  # noqa: E402


def row(**changed):
    r = {"schema_version": "21", "batch": "4", "heads": "16", "kv_heads": "1", "head_dim": "576", "dtype": "bf16",
         "direction": "fwd", "kind": "mla", "seq_len": "1", "seq_len_kv": "8192", "seq_lens": "",
         "seq_lens_kv": "", "kv_layout": "contiguous", "page_size": "0", "page_order": "",
         "window": "", "softcap": "0"}
    r.update(changed)
    return r


failures = []
for changed, want in [({}, "decode"), ({"seq_len": "2"}, "decode"), ({"seq_len": "16"}, "decode"),
                      ({"seq_len": "17"}, "prefill"), ({"seq_len": "8192"}, "prefill"),
                      ({"seq_len": "8", "seq_len_kv": "8"}, "prefill"),
                      ({"seq_len": "2", "seq_lens": "uniform(1,3)"}, "prefill"),
                      # written as lengths a sequence: each sequence's queries against its keys
                      ({"seq_lens": "4*1", "seq_lens_kv": "4*8192"}, "decode"),
                      ({"seq_lens": "4*1"}, "prefill"),  # keys = queries: 1 against 1
                      ({"seq_lens": "1,1,1,1", "seq_lens_kv": "uniform(100,200)"}, "decode"),
                      ({"seq_len": "3", "seq_lens": "uniform(1,3)", "seq_lens_kv": "8192"}, "decode"),
                      # a drawn length that may pass 16: prefills (no decode is sure)
                      ({"seq_len": "40", "seq_lens": "uniform(1,40)", "seq_lens_kv": "8192"}, "prefill"),
                      ({"seq_len": "300", "seq_lens": "histogram(a+b.csv)"}, "prefill"),
                      ({"seq_len": "300", "seq_lens": "histogram(a*2+b.csv)",
                        "seq_lens_kv": "histogram(c+d.csv)"}, "prefill"),
                      ({"seq_len": "4", "seq_lens": "4*uniform(1,4)",
                        "seq_lens_kv": "2*8192 + 2*uniform(10,20)"}, "decode"),
                      ({"seq_len": "2048", "seq_lens": "2*2048 + 32*1",
                        "seq_lens_kv": "34*4096"}, "mixed")]:
    if phase(row(**changed)) != want:
        failures.append(f"{changed} is not a {want}")
mixed = row(seq_len="2048", seq_lens="2*2048 + 32*1", seq_lens_kv="2*2048 + 32*1024")
if phase(mixed) != "mixed":
    failures.append("a mix of prefills and decodes is not 'mixed'")
if shape(mixed) != "mixed b4, 2*2048 + 32*1 over 2*2048 + 32*1024":
    failures.append(f"mixed: {shape(mixed)!r}")
for changed, word in [({"sinks": "true"}, "sinks"), ({"chunk": "8192"}, "chunk 8192"),
                      ({"kv_dtype": "fp8_e4m3"}, "fp8_e4m3 cache")]:
    if word not in shape(row(**changed)).split(", "):
        failures.append(f"{changed} is not named: {shape(row(**changed))!r}")
if "chunk" in shape(row(chunk="0")) or "chunk" in shape(row(chunk="")):
    failures.append(f"no chunk (0, as reports write it) is named: {shape(row(chunk='0'))!r}")
if "cache" in shape(row(kv_dtype="bf16")):
    failures.append("a cache of q's dtype is named")
if shape(row()) != "decode b4, 8192":
    failures.append(f"one query: {shape(row())!r}")
if shape(row(seq_len="2")) != "decode b4, 8192, 2 queries":
    failures.append(f"two queries: {shape(row(seq_len='2'))!r}")
if shape(row(seq_lens="4*1", seq_lens_kv="4*8192")) != "decode b4, 4*8192":
    failures.append(f"a decode written as a mix: {shape(row(seq_lens='4*1', seq_lens_kv='4*8192'))!r}")
if shape(row(seq_len="3", seq_lens="uniform(1,3)")) != "prefill b4, uniform(1,3)" or \
        shape(row(seq_len="3", seq_lens="uniform(1,3)", seq_lens_kv="8192")) != "decode b4, 8192, 1-3 queries":
    failures.append(f"drawn queries: {shape(row(seq_len='3', seq_lens='uniform(1,3)', seq_lens_kv='8192'))!r}")
if shape(row(seq_len="300", seq_lens="histogram(x/a+b.csv)")) != "prefill b4, histogram a+b":
    failures.append(f"a histogram named with '+': {shape(row(seq_len='300', seq_lens='histogram(x/a+b.csv)'))!r}")
for column, value, named in [("heads", "128", "h128"), ("kv_heads", "16", "kv16"),
                             ("head_dim", "192", "d192"), ("dtype", "fp8", "fp8"),
                             ("direction", "bwd", "bwd"), ("kind", "attention", "attention")]:
    rows = [row(), row(**{column: value})]
    varying = varying_columns(rows)
    if varying != [column]:
        failures.append(f"rows that differ in {column} vary in {varying}")
    elif named not in shape(rows[1], varying).split(",")[0].split():
        failures.append(f"{column} is not named: {shape(rows[1], varying)!r}")
if varying_columns([row(), row(batch="8", seq_len_kv="4096")]):
    failures.append("the batch and the lengths are named as varying columns")
# Reruns and the summary, through CSV files as the tool reads them.
import contextlib  # noqa: E402
import csv  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

from model_table import mode_rows, rerun_paths, served_kind, summary, table, with_reruns  # noqa: E402

MODE = "cold"


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def timed(point, backend, ms="", **changed):
    """A measured row of a report: a one-query decode unless changed."""
    return row(**{"point_id": point, "backend": backend, "time_ms_median": ms, "timing_mode": MODE,
                  "status": "ok", "reason": "", "kv_dtype": "", "sinks": "false", **changed})


NO = dict(status="unsupported")  # a refused row: no time


def printed(fn, *args):
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        fn(*args)
    return text.getvalue().splitlines()


def cli(*args):
    return subprocess.run([sys.executable, os.path.join(sys.argv[1], "model_table.py"), *args,
                           "--mode", MODE], capture_output=True, text=True).stdout


# A cache of q's own dtype (reports write kv_dtype=bf16 beside dtype=bf16) is no fp8 cache.
if served_kind(timed("p", "a", "1", kv_dtype="bf16")) != "decode, 1 query":
    failures.append(f"a bf16 cache under bf16 q: {served_kind(timed('p', 'a', '1', kv_dtype='bf16'))!r}")
with tempfile.TemporaryDirectory() as d:
    def at(*parts):
        return os.path.join(d, *parts)
    # A rerun of some backends stands in for their rows, and only theirs; its .kernels.csv and
    # .samples.csv and another report's reruns are not reruns.
    first = [timed("p", "a", "2"), timed("p", "b", "3")]
    write(at("m.csv"), first)
    os.mkdir(at("re"))
    write(at("re", "m.b.csv"), [timed("p", "b", "1")])
    write(at("re", "m.b.kernels.csv"), [timed("p", "b", "9")])
    write(at("re", "m.b.samples.csv"), [timed("p", "b", "9")])
    write(at("re", "mx.b.csv"), [timed("p", "b", "9")])
    paths = rerun_paths(at("m.csv"), at("re"))
    if [os.path.basename(p) for p in paths] != ["m.b.csv"]:
        failures.append(f"reruns of m.csv: {paths}")
    # A report's name with glob characters names itself, not a pattern.
    write(at("m[1].csv"), first)
    write(at("re", "m[1].b.csv"), [timed("p", "b", "1")])
    paths = rerun_paths(at("m[1].csv"), at("re"))
    if [os.path.basename(p) for p in paths] != ["m[1].b.csv"]:
        failures.append(f"reruns of m[1].csv: {paths}")
    rows, points, backends, _, _ = with_reruns(at("m.csv"), mode_rows(at("m.csv"), MODE),
                                               [(p, mode_rows(p, MODE)) for p in paths])
    times = sorted((r["backend"], r["time_ms_median"]) for r in rows if r["point_id"] == "p")
    if times != [("a", "2"), ("b", "1")] or backends != ["a", "b"] or len(rows) != 2:
        failures.append(f"a rerun of b: {times}, {backends}, {len(rows)} rows")
    # A rerun cut short (b at point p only) leaves b's row at point q as it was.
    write(at("two.csv"), [timed("p", "b", "3"), timed("q", "b", "4"), timed("q", "a", "5")])
    write(at("short.csv"), [timed("p", "b", "1")])
    rows, points, backends, _, _ = with_reruns(at("two.csv"), mode_rows(at("two.csv"), MODE),
                                               [(at("short.csv"), mode_rows(at("short.csv"), MODE))])
    got = sorted((r["point_id"], r["backend"], r["time_ms_median"]) for r in rows)
    if got != [("p", "b", "1"), ("q", "a", "5"), ("q", "b", "4")] or points != ["p", "q"]:
        failures.append(f"a rerun of b at p only: rows {got}, points {points}")
    # A rerun bringing a backend the report lacks adds its column.
    write(at("n.csv"), [timed("p", "a", "2")])
    write(at("c.csv"), [timed("p", "c", "1")])
    rows, _, backends, _, _ = with_reruns(at("n.csv"), mode_rows(at("n.csv"), MODE),
                                          [(at("c.csv"), mode_rows(at("c.csv"), MODE))])
    if backends != ["a", "c"] or [r["backend"] for r in rows] != ["a", "c"]:
        failures.append(f"a rerun's new backend: {backends}")
    # Two rerun folders: the later one's rows of b stand in for the earlier one's.
    write(at("t.csv"), [timed("p", "a", "2"), timed("p", "b", "3")])
    for folder, rerun in [("re", timed("p", "b", "1")), ("re2", timed("p", "b", "0.5")),
                          ("re3", timed("p", "a", "4")), ("re5", timed("p", "b", "5")),
                          ("re6", timed("p", "a", "0.5"))]:
        os.makedirs(at(folder), exist_ok=True)
        write(at(folder, f"t.{rerun['backend']}.csv"), [rerun])
    for folders, want in [(["re", "re2"], "0.5"), (["re2", "re"], "1")]:
        cells = [line.split(" | ") for line in printed(table, at("t.csv"), MODE, [at(f) for f in folders])
                 if "**b**" in line]
        if not cells or cells[0][2] != want:
            failures.append(f"reruns {folders}: b reads {cells}, want {want}")
    # The summary: per kind of point (1-query decode from an fp8 cache, 2-query decode with
    # sinks, prefill), each backend's wins and ok rows; a refusal counts as neither.
    fp8, two = dict(kv_dtype="fp8_e4m3"), dict(seq_len="2", sinks="true")
    write(at("s.csv"), [
        timed("f1", "a", "2", **fp8), timed("f1", "b", "1", **fp8),
        timed("f2", "a", "1", **fp8), timed("f2", "b", **NO, **fp8),
        timed("t", "a", "3", **two), timed("t", "b", "4", **two),
        timed("p", "a", **NO, seq_len="8192"), timed("p", "b", "5", seq_len="8192")])
    want = ["| s: decode, 1 query, fp8_e4m3 cache | 2 | a 1/2, b 1/1 |",
            "| s: decode, 2-16 queries, sinks | 1 | a 1/1, b 0/1 |",
            "| s: prefill | 1 | b 1/1 |"]
    if printed(summary, [at("s.csv")], MODE)[2:] != want:
        failures.append(f"summary: {printed(summary, [at('s.csv')], MODE)[2:]}, want {want}")
    # Order: most wins first, then most ok rows, whatever the names; a kind none ran says so.
    write(at("o.csv"), [timed("p1", "a", "3"), timed("p1", "z", "1"),
                        timed("p2", "a", "3"), timed("p2", "z", "1"),
                        timed("p3", "a", "3"), timed("p3", "z", **NO),
                        timed("q", "a", seq_len="8192", **NO), timed("q", "z", seq_len="8192", **NO)])
    got = printed(summary, [at("o.csv")], MODE)[2:]
    want = ["| o: decode, 1 query | 3 | z 2/2, a 1/3 |", "| o: prefill | 1 | none ok |"]
    if got != want:
        failures.append(f"summary order and none ok: {got}, want {want}")
    # The summary takes the reruns; the command line passes every --reruns, the later folder
    # winning, with and without --summary.
    got = printed(summary, [at("t.csv")], MODE, [at("re")])[2:]
    if got != ["| t: decode, 1 query | 1 | b 1/1, a 0/1 |"]:
        failures.append(f"summary with a rerun: {got}")
    out = cli(at("t.csv"), "--reruns", at("re5"), "--reruns", at("re"))
    if "| **b** | 1 |" not in out:
        failures.append(f"command line, two --reruns of b: the later not standing in:\n{out}")
    out = cli(at("t.csv"), "--reruns", at("re"), "--reruns", at("re3"))
    if "| **b** | 1 |" not in out or "a (4.00x)" not in out:
        failures.append(f"command line, --reruns of b then of a: not both applied:\n{out}")
    out = cli(at("t.csv"), "--summary", "--reruns", at("re5"), "--reruns", at("re"))
    if "| t: decode, 1 query | 1 | b 1/1, a 0/1 |" not in out:
        failures.append(f"command line --summary with two --reruns:\n{out}")
    out = cli(at("t.csv"), "--summary", "--reruns", at("re6"), "--reruns", at("re"))
    if "| t: decode, 1 query | 1 | a 1/1, b 0/1 |" not in out:  # a 0.5 (re6) beats b 1 (re)
        failures.append(f"command line --summary, --reruns of a then of b: not both applied:\n{out}")
print("\n".join(failures) or "ok")
sys.exit(1 if failures else 0)
