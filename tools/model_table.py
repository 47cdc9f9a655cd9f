#!/usr/bin/env python3
"""Who wins per model preset: for each point of each report (configs/models/*.yaml run into
results/<machine>/models/), the fastest `ok` backend in one timing mode, with the share of the
roof that bounds it (% of the measured bandwidth for memory-bound rows, % of peak for compute-bound
ones), the runner-up, and what every other backend said; then what each backend refused and why.

    tools/model_table.py results/h200/models/*.csv [--mode graph] [--reruns DIR ...]
                         [--across-sweeps] [--summary]

--summary: one table over every report instead: per preset and kind of point (prefill, mixed
batch, decode of 1 or more queries, from an fp8 cache, with sinks), how many points each backend
wins and how many it runs `ok`.

--reruns DIR: a later run of some backends of a preset (DIR/<preset>.<backends>.csv, as
tools/device_served.sh writes them) replaces those backends' rows of the preset's report; given
more than once, each folder's rows replace those of the folders before it. A rerun is of the same
sweep as the rows it replaces: the same `config_fingerprint` (what `attnbench run --resume` holds
a sweep to: its points, drawn lengths, measurement settings, tolerances and seed), the same
`config` file and the same card (`device_name`). One of another fingerprint is refused unless
--across-sweeps lets it stand in (a later harness's run of the same preset on the same card: the
table then says so); another config or card is always refused. Points a rerun measures that the
report lacks are added, and said on stderr. A DIR that does not exist, or holds no rerun of any
report given, is an error.

Repetitions (`run --repetitions N`): each (point, backend)'s time is the median over all its
repetitions, and its rates (TFLOP/s, TB/s and their shares of the roof) are that median's; the
winner, the runner-up's ratio and every cell are those medians. A (point, backend) that is not
`ok` in every repetition is not ranked: it shows the first repetition's status that is not `ok`.

The phase of a point comes from its lengths as the queries are: a sequence is a decode when it
surely brings at most 16 queries and fewer than its keys (each run of a mix `COUNT*LENGTHS` on its
own; a drawn length may be anything from its form's least to the row's seq_len / seq_len_kv, the
longest drawn); a point is a decode when every sequence is one, a prefill when none is, mixed
otherwise. A drawn seq_lens without seq_lens_kv is a prefill (keys = queries, as the harness draws
it).

Exit status: 0; 2 when a report or rerun cannot be read (a folder, a binary, not UTF-8, no header,
no schema_version, a schema this tool does not read, a malformed row, no rows in the mode) or a
rerun is refused, named with its line; 1 when a report has no `ok` row to rank (the table and what
was refused are printed, and stderr says which report).
"""
import argparse
import glob
import os
import re
import statistics
import sys
from collections import defaultdict

from report_reader import ReportError, fail, integer, number, read_report  # tools/, beside this file

TOOL = "model_table"
MODES = ("cold", "batch", "graph", "wall")
# The columns the table reads besides the key ones, with the schema version that brought them.
NEEDS = (("time_ms_median", 1), ("batch", 1), ("heads", 1), ("seq_len", 1), ("head_dim", 1),
         ("dtype", 1))
RATES = ("tflops", "pct_of_peak", "tb_per_s", "pct_of_bandwidth")  # each inverse to the time

# Problem columns a label names when they differ between a report's points (a preset sweeps the
# heads of two tensor-parallel degrees, say); the lengths, layout and variants are always named.
NAMED_WHEN_THEY_VARY = {"kind": "{}", "heads": "h{}", "kv_heads": "kv{}", "head_dim": "d{}",
                        "dtype": "{}", "direction": "{}"}

# A sequence is a decode when it brings a few queries (speculative or multi-token decode brings
# 2-8) against a longer cache.
DECODE_MAX_QUERIES = 16
LONGEST = 10 ** 9  # core/src/base/lengths.cpp's kLongest: a length is at most this


def where(r):
    return r.get("_where", "a row")


# Length specs (core/src/base/lengths.hpp): "512", "100,2000,37", "uniform(LO,HI)",
# "normal(MEAN,STD[,MAX])", "lognormal(MEDIAN,SIGMA[,MAX])", "histogram(FILE)", and a mix of them,
# "2*2048 + 32*1"; inside parentheses a '+' or '*' is no mix's (a histogram file's name).
def _top_level_split(text, sep):
    out, depth = [""], 0
    for c in text:
        depth += 1 if c == "(" else -1 if c == ")" else 0
        if c == sep and depth == 0:
            out.append("")
        else:
            out[-1] += c
    return out


def _whole(text, spec, r):
    t = text.strip()
    try:
        v = float(t)
    except ValueError:
        v = 0.0
    if not (1 <= v <= LONGEST) or v != int(v):
        raise ReportError(f"{where(r)}: '{spec}' is no length spec ('{t}' is not a length)")
    return int(v)


def length_runs(spec, longest, r, whole=None):
    """A length spec as runs of sequences, [(count, lo, hi)]: count None for every sequence of the
    batch (a form that gives them all one law), lo..hi the lengths they can have, capped at
    `longest` (the row's seq_len or seq_len_kv: the longest sequence's). `whole`: the spec a
    part is of, for messages."""
    text = spec.strip()
    spec = whole or spec
    terms = _top_level_split(text, "+")
    if len(terms) > 1 or len(_top_level_split(text, "*")) > 1:  # a mix
        runs = []
        for term in terms:
            factors = _top_level_split(term, "*")
            if len(factors) != 2:
                raise ReportError(f"{where(r)}: '{spec}' is no length spec (a mix is parts "
                                  f"COUNT*LENGTHS joined by '+', not '{term.strip()}')")
            count = _whole(factors[0], spec, r)
            part = length_runs(factors[1], longest, r, spec)
            runs += part if part[0][0] is not None else [(count, part[0][1], part[0][2])]
        return runs
    open_at = text.find("(")
    if open_at < 0:
        lengths = [_whole(item, spec, r) for item in text.split(",")]
        if len(lengths) == 1:
            return [(None, min(lengths[0], longest), min(lengths[0], longest))]
        return [(1, min(n, longest), min(n, longest)) for n in lengths]
    name, inside = text[:open_at].strip(), text[open_at + 1:].rstrip()
    if not inside.endswith(")"):
        raise ReportError(f"{where(r)}: '{spec}' is no length spec (no closing ')')")
    inside = inside[:-1]
    if name == "histogram":
        lo, hi = 1, LONGEST
    elif name in ("uniform", "normal", "lognormal"):
        args = inside.split(",")
        if name == "uniform" and len(args) == 2:
            lo, hi = _whole(args[0], spec, r), _whole(args[1], spec, r)
        elif name != "uniform" and len(args) in (2, 3):
            lo, hi = 1, _whole(args[2], spec, r) if len(args) == 3 else LONGEST
        else:
            raise ReportError(f"{where(r)}: '{spec}' is no length spec (arguments of {name})")
    else:
        raise ReportError(f"{where(r)}: '{spec}' is no length spec (unknown form '{name}')")
    hi = min(hi, longest)
    return [(None, min(lo, hi), hi)]


def _aligned(q_runs, kv_runs, r):
    """(q lo, q hi, kv lo, kv hi) over stretches of the batch where both sides are one run."""
    if q_runs[0][0] is None or kv_runs[0][0] is None:
        (one, many, flip) = (q_runs, kv_runs, False) if q_runs[0][0] is None else (kv_runs, q_runs, True)
        _, lo, hi = one[0]
        return [(a, b, lo, hi) if flip else (lo, hi, a, b) for _, a, b in many]
    out, qi, ki = [], 0, 0
    q_left, kv_left = q_runs[0][0], kv_runs[0][0]
    while qi < len(q_runs) and ki < len(kv_runs):
        out.append(q_runs[qi][1:] + kv_runs[ki][1:])
        step = min(q_left, kv_left)
        q_left, kv_left = q_left - step, kv_left - step
        if q_left == 0:
            qi += 1
            q_left = q_runs[qi][0] if qi < len(q_runs) else 0
        if kv_left == 0:
            ki += 1
            kv_left = kv_runs[ki][0] if ki < len(kv_runs) else 0
    if qi < len(q_runs) or ki < len(kv_runs):
        raise ReportError(f"{where(r)}: seq_lens '{r['seq_lens']}' and seq_lens_kv "
                          f"'{r['seq_lens_kv']}' give different numbers of sequences")
    return out


def query_runs(r):
    seq_len = integer(r, "seq_len")
    return length_runs(r["seq_lens"], seq_len, r) if r.get("seq_lens") else [(None, seq_len, seq_len)]


def phase(r):
    """'decode', 'prefill' or 'mixed' (prefills and decodes in one call), as a serving engine
    would call the point: from each sequence's queries and keys (see the module's doc)."""
    q_spec, kv_spec = r.get("seq_lens", "").strip(), r.get("seq_lens_kv", "").strip()
    q = query_runs(r)
    if not kv_spec and q_spec and not q_spec.isdigit():
        return "prefill"  # a drawn seq_lens alone: each sequence's keys are its queries
    kv_len = integer(r, "seq_len_kv")
    kv = length_runs(kv_spec, kv_len, r) if kv_spec else [(None, kv_len, kv_len)]
    decodes = {q_hi <= DECODE_MAX_QUERIES and q_hi < kv_lo for _, q_hi, kv_lo, _ in _aligned(q, kv, r)}
    return "mixed" if len(decodes) > 1 else "decode" if decodes == {True} else "prefill"


def varying_columns(rows):
    """The columns of NAMED_WHEN_THEY_VARY that take more than one value in these rows."""
    return [c for c in NAMED_WHEN_THEY_VARY if len({r.get(c, "") for r in rows}) > 1]


def shape(r, varying=()):
    """The point in a reader's words: prefill or decode (with its queries a sequence), lengths,
    the columns that vary in its report, layout and variants."""
    kind = phase(r)
    lens = r["seq_lens_kv"] if kind == "decode" else r["seq_lens"]
    lens = lens or (r["seq_len_kv"] if kind == "decode" else r["seq_len"])
    if kind == "mixed":  # the queries' lengths, then the keys'
        lens = f"{r['seq_lens']} over {r['seq_lens_kv']}"
    lens = re.sub(r"histogram\((?:[^)]*/)?([^/)]+)\.csv\)", r"histogram \1", lens)
    words = [" ".join([f"{kind} b{r['batch']}"] + [NAMED_WHEN_THEY_VARY[c].format(r[c]) for c in varying]),
             lens]
    if kind == "decode":
        runs = query_runs(r)
        lo, hi = min(lo for _, lo, _ in runs), max(hi for _, _, hi in runs)
        if hi > 1:
            words.append(f"{hi} queries" if lo == hi else f"{lo}-{hi} queries")
    if r.get("kv_layout") == "paged":
        words.append(f"paged {r['page_size']} {r['page_order']}")
    if r.get("window"):
        words.append(f"window {r['window']}")
    if r.get("softcap") and float(r["softcap"]) > 0:
        words.append(f"softcap {float(r['softcap']):g}")
    if r.get("chunk", "0") not in ("", "0"):  # reports write 0 for no chunk
        words.append(f"chunk {r['chunk']}")
    if r.get("sinks") == "true":
        words.append("sinks")
    if r.get("kv_dtype") and r["kv_dtype"] != r.get("dtype"):
        words.append(f"{r['kv_dtype']} cache")
    return ", ".join(words)


def roof(r):
    """The share of the roof the row sits under, as text."""
    if r.get("bound") == "memory" and r.get("pct_of_bandwidth") and r.get("tb_per_s"):
        return f"{float(r['pct_of_bandwidth']):.0f}% of bandwidth ({float(r['tb_per_s']):.2f} TB/s)"
    if r.get("pct_of_peak") and r.get("tflops"):
        return f"{float(r['pct_of_peak']):.0f}% of peak ({float(r['tflops']):.0f} TFLOP/s)"
    return ""


def check_row(r):
    """What the table reads of a row, checked where it is: a ranked time positive and finite, the
    rates finite and not below 0, the lengths whole numbers and a length spec."""
    if r["status"] == "ok":
        number(r, "time_ms_median", positive=True)
        for column in RATES:
            number(r, column)
    number(r, "softcap")
    integer(r, "batch")
    phase(r)


def mode_rows(path, mode, rerun=False):
    """The rows of `path` in timing mode `mode` (and CPU rows, timed `wall`), checked. A report
    without any is a ReportError; a rerun without any gives none (the caller says so)."""
    report = read_report(path, NEEDS)
    rows = [r for r in report.rows if r["timing_mode"] in (mode, "wall")]
    if not rows and not rerun:
        if not report.rows:
            raise ReportError(f"{path}: no rows (a header only: a run that measured nothing)")
        modes = ", ".join(sorted({r["timing_mode"] for r in report.rows}))
        raise ReportError(f"{path}: no rows in {mode} mode (its modes: {modes}; --mode picks one)")
    for r in rows:
        check_row(r)
    return rows


def rerun_paths(path, folder):
    """DIR/<name>.<backends>.csv for report <name>.csv (not their .kernels.csv or .samples.csv)."""
    if not folder:
        return []
    name = os.path.basename(path).removesuffix(".csv")
    return sorted(p for p in glob.glob(os.path.join(folder, glob.escape(name) + ".*.csv"))
                  if not p.endswith((".kernels.csv", ".samples.csv")))


def same_config(a, b):
    """Whether two `config` cells name one file: equal paths, or an absolute path ending in the
    relative one (one run made from the repository root, the other from elsewhere)."""
    a, b = os.path.normpath(a) if a else "", os.path.normpath(b) if b else ""
    if a == b:
        return True
    if not a or not b or os.path.isabs(a) == os.path.isabs(b):
        return False
    longer, shorter = (a, b) if os.path.isabs(a) else (b, a)
    return longer.endswith(os.sep + shorter)


def with_reruns(path, rows, reruns, across_sweeps=False):
    """The rows of report `path`, each (point, backend) a rerun measured standing in for its rows
    (all its repetitions); points a rerun did not reach (a call cut short) keep their rows, points
    it adds are added. `reruns`: [(path, rows)], later ones over earlier ones. Returns the rows,
    the points and the backends in order (the report's first), and notes on what each rerun
    added or brought from another sweep. A ReportError for a rerun of another sweep (see the
    module's doc)."""
    rows = list(rows)
    points = list(dict.fromkeys(r["point_id"] for r in rows))
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    origin = defaultdict(list)  # the report's own rows: the sweep, config and card of its table
    for r in rows:
        origin[r["point_id"]].append(r)
    own = {c: {r[c] for r in rows} for c in ("config", "config_fingerprint", "device_name")}
    notes, other_sweeps = [], []
    for rerun_path, new_rows in reruns:
        if not new_rows:
            notes.append(f"{rerun_path}: no rows in this timing mode: nothing of it stands in")
            continue
        have = {r["point_id"] for r in rows}
        added = list(dict.fromkeys(r["point_id"] for r in new_rows if r["point_id"] not in have))
        adds = (f" (it would add {len(added)} point(s) the report lacks: {_some(added)})"
                if added else "")
        other = None
        for r in new_rows:
            here = origin.get(r["point_id"], [])
            # Another preset or another card: never one table, at a point the report has or not.
            for column, what in (("config", "another config"), ("device_name", "another card")):
                theirs = {x[column] for x in here} or own[column]
                if column == "config" and any(same_config(r[column], t) for t in theirs):
                    continue
                if column != "config" and (r[column] in theirs or not r[column] or theirs == {""}):
                    continue
                raise ReportError(f"{r['_where']}: a rerun of {what}: {column} '{r[column]}', "
                                  f"the report {path} has '{sorted(theirs)[0]}'"
                                  + (f" at {r['point_id']}" if here else "") + adds)
            fingerprints = {x["config_fingerprint"] for x in here}
            if here and r["config_fingerprint"] not in fingerprints and other is None:
                other = (r, sorted(fingerprints)[0])
        if other and not across_sweeps:
            r, theirs = other
            raise ReportError(
                f"{r['_where']}: a rerun of another sweep: config_fingerprint "
                f"'{r['config_fingerprint']}' at {r['point_id']}, the report {path} has '{theirs}' "
                "there (other points, drawn lengths, measurement settings, tolerances or seed, or "
                "another harness: `attnbench run --resume` refuses such rows too); --across-sweeps "
                f"lets its rows stand in anyway{adds}")
        if other:
            r, theirs = other
            other_sweeps.append(f"{rerun_path} (config_fingerprint {r['config_fingerprint']}, the "
                                f"report's {theirs})")
        if added:
            fps = {r["config_fingerprint"] for r in new_rows if r["point_id"] in added}
            another = "" if fps <= own["config_fingerprint"] else \
                f" (another sweep: config_fingerprint {', '.join(sorted(fps))})"
            notes.append(f"{rerun_path}: adds {len(added)} point(s) the report lacks{another}: "
                         f"{_some(added)}")
        replaced = {(r["point_id"], r["backend"]) for r in new_rows}
        rows = [r for r in rows if (r["point_id"], r["backend"]) not in replaced] + new_rows
        points += added
        backends += [b for b in dict.fromkeys(r["backend"] for r in new_rows) if b not in backends]
    return rows, points, backends, notes, other_sweeps


def _some(points, n=5):
    return ", ".join(points[:n]) + (f" and {len(points) - n} more" if len(points) > n else "")


def ranked(point_rows):
    """A point's measured rows, fastest first."""
    return sorted((r for r in point_rows if r["status"] == "ok" and r["time_ms_median"]),
                  key=lambda r: float(r["time_ms_median"]))


def cells(point_rows, backends, value):
    """One cell per backend: value(row) where the row is ok and has it (not None), else the row's
    status; empty for a backend without a row."""
    out = []
    for b in backends:
        r = next((x for x in point_rows if x["backend"] == b), None)
        shown = value(r) if r is not None and r["status"] == "ok" else None
        out.append("" if r is None else shown if shown is not None else r["status"])
    return out


def over_repetitions(rows):
    """One row per (point, backend, timing mode): the median over its repetitions (see the
    module's doc), with `_reps`, how many."""
    groups = defaultdict(list)
    for r in rows:
        groups[(r["point_id"], r["backend"], r["timing_mode"])].append(r)
    out = []
    for group in groups.values():
        group.sort(key=lambda r: int(r["repetition"]))
        ok = [r for r in group if r["status"] == "ok" and r["time_ms_median"]]
        if len(ok) == len(group):
            times = [float(r["time_ms_median"]) for r in ok]
            median = statistics.median(times)
            row = dict(ok[0], time_ms_median=repr(median))
            for column in RATES:  # each repetition's rate times its time is the same work
                if row.get(column):
                    row[column] = repr(float(row[column]) * times[0] / median)
        else:
            row = dict(next(r for r in group if r not in ok))
            if len(group) > 1:
                row["reason"] = (f"repetition {row['repetition']} of {len(group)} "
                                 f"(ok in {len(ok)}): {row['reason']}")
        row["_reps"] = len(group)
        out.append(row)
    return out


class Merged:
    """A report with its reruns standing in and its repetitions taken together."""

    def __init__(self, path, mode, reruns_folders=(), across_sweeps=False):
        reruns = [(p, mode_rows(p, mode, rerun=True)) for folder in reruns_folders
                  for p in rerun_paths(path, folder)]
        rows, self.points, self.backends, self.notes, self.other_sweeps = with_reruns(
            path, mode_rows(path, mode), reruns, across_sweeps)
        self.rows = over_repetitions(rows)
        self.by_point = defaultdict(list)
        for r in self.rows:
            self.by_point[r["point_id"]].append(r)
        self.by_point = {p: sorted(self.by_point[p], key=lambda r: self.backends.index(r["backend"]))
                         for p in self.points}
        self.repetitions = sorted({r["_reps"] for r in self.rows})
        self.ranked = any(ranked(self.by_point[p]) for p in self.points)

    def note(self):
        for line in self.notes:
            print(f"{TOOL}: {line}", file=sys.stderr)


def served_kind(r):
    """What a serving engine would call the point: its phase, a decode's queries a sequence, and
    the two features of 2026's serving (an fp8 cache, sinks)."""
    words = [phase(r)]
    if words[0] == "decode":
        words[0] = "decode, 1 query" if r["seq_len"] == "1" else "decode, 2-16 queries"
    if r.get("kv_dtype") and r["kv_dtype"] != r.get("dtype"):
        words.append(f"{r['kv_dtype']} cache")
    if r.get("sinks") == "true":
        words.append("sinks")
    return ", ".join(words)


def summary(paths, mode, reruns_folders=(), across_sweeps=False):
    """Per preset and kind of point: points, and per backend its wins / its ok rows. Returns the
    reports with no ok row."""
    merged = [Merged(path, mode, reruns_folders, across_sweeps) for path in paths]  # all read first
    print("| preset | points | wins (of the points) and ok rows per backend |")
    print("| --- | --- | --- |")
    for path, m in zip(paths, merged):
        m.note()
        name = os.path.basename(path).removesuffix(".csv")
        kinds = defaultdict(list)
        for p in m.points:
            kinds[served_kind(m.by_point[p][0])].append(p)
        for kind, kind_points in kinds.items():
            wins, ok = defaultdict(int), defaultdict(int)
            for p in kind_points:
                fastest = ranked(m.by_point[p])
                if fastest:
                    wins[fastest[0]["backend"]] += 1
                for r in fastest:
                    ok[r["backend"]] += 1
            counts = ", ".join(f"{b} {wins[b]}/{ok[b]}" for b in sorted(ok, key=lambda b: (-wins[b], -ok[b], b)))
            print(f"| {name}: {kind} | {len(kind_points)} | {counts or 'none ok'} |")
    return [path for path, m in zip(paths, merged) if not m.ranked]


def table(path, mode, reruns_folders=(), across_sweeps=False):
    """The table of one report; whether any of its points has an ok row to rank."""
    m = Merged(path, mode, reruns_folders, across_sweeps)
    m.note()
    varying = varying_columns(m.rows)
    name = os.path.basename(path).removesuffix(".csv")
    print(f"### {name} ({mode} mode)\n")
    if m.repetitions != [1]:
        counts = " to ".join(map(str, (m.repetitions[0], m.repetitions[-1]))) \
            if len(m.repetitions) > 1 else str(m.repetitions[0])
        print(f"Each time is the median over the (point, backend)'s repetitions ({counts}).\n")
    if m.other_sweeps:
        print("Rows of another sweep stand in (--across-sweeps): " + "; ".join(m.other_sweeps) + ".\n")
    print("| point | winner | time (ms) | roof | runner-up (x slower) | " + " | ".join(m.backends) + " |")
    print("| --- " * (5 + len(m.backends)) + "|")
    for p in m.points:
        ok = ranked(m.by_point[p])
        row_cells = cells(m.by_point[p], m.backends, lambda r: f"{float(r['time_ms_median']):.3g}"
                          + (" (fed)" if r.get("feed") else "") if r["time_ms_median"] else None)
        head = f"| {shape(m.by_point[p][0], varying)} | "
        if not ok:
            print(head + "none | | | | " + " | ".join(row_cells) + " |")
            continue
        w = ok[0]
        second = (f"{ok[1]['backend']} ({float(ok[1]['time_ms_median']) / float(w['time_ms_median']):.2f}x)"
                  if len(ok) > 1 else "")
        print(head + f"**{w['backend']}** | {float(w['time_ms_median']):.4g} | {roof(w)} | {second} | "
              + " | ".join(row_cells) + " |")
    print()
    refusals = defaultdict(set)
    for r in m.rows:
        if r["status"] != "ok":
            refusals[(r["backend"], r["status"])].add(r["reason"])
    if refusals:
        print("Not measured:\n")
        for (b, status), reasons in sorted(refusals.items()):
            for reason in sorted(reasons):
                print(f"- {b} ({status}): {reason}")
        print()
    return m.ranked


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--mode", default="graph", choices=MODES)
    ap.add_argument("--reruns", action="append", default=[],
                    help="folder of later runs of some backends (see above); repeatable")
    ap.add_argument("--across-sweeps", action="store_true",
                    help="let reruns of another config_fingerprint (same config and card) stand in")
    ap.add_argument("--summary", action="store_true", help="one table of wins per preset and kind")
    args = ap.parse_args(argv)
    for folder in args.reruns:
        if not os.path.exists(folder):
            fail(TOOL, f"--reruns {folder}: no such folder")
        if not os.path.isdir(folder):
            fail(TOOL, f"--reruns {folder}: not a folder (name the folder the reruns are in)")
        if not any(rerun_paths(path, folder) for path in args.reports):
            fail(TOOL, f"--reruns {folder}: no rerun of the reports given in it (<report>.<backends>"
                       f".csv, e.g. {os.path.join(folder, os.path.basename(args.reports[0]).removesuffix('.csv'))}"
                       ".flashinfer.csv)")
    try:
        if args.summary:
            unranked = summary(args.reports, args.mode, args.reruns, args.across_sweeps)
        else:
            # Every report read and checked before a table is printed: an error prints no half.
            for path in args.reports:
                Merged(path, args.mode, args.reruns, args.across_sweeps)
            unranked = [path for path in args.reports
                        if not table(path, args.mode, args.reruns, args.across_sweeps)]
    except ReportError as e:
        fail(TOOL, str(e))
    for path in unranked:
        print(f"{TOOL}: {path}: no ok row in {args.mode} mode: nothing ranked", file=sys.stderr)
    if unranked:
        sys.exit(1)


if __name__ == "__main__":
    main()
