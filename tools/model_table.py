#!/usr/bin/env python3
"""Who wins per model preset: for each point of each report (configs/models/*.yaml run into
results/<machine>/models/), the fastest `ok` backend in one timing mode, with the share of the
roof that bounds it (% of the measured bandwidth for memory-bound rows, % of peak for compute-bound
ones), the runner-up, and what every other backend said; then what each backend refused and why.

    tools/model_table.py results/h200/models/*.csv [--mode graph] [--reruns DIR ...] [--summary]

--summary: one table over every report instead: per preset and kind of point (prefill, mixed
batch, decode of 1 or more queries, from an fp8 cache, with sinks), how many points each backend
wins and how many it runs `ok`.

--reruns DIR: a later run of some backends of a preset (DIR/<preset>.<backends>.csv, as
tools/device_served.sh writes them) replaces those backends' rows of the preset's report; given
more than once, each folder's rows replace those of the folders before it.
"""
import argparse
import os
import re
from collections import defaultdict

import glob

from who_wins import cells, phase, ranked, read_report  # tools/, beside this file

# Problem columns a label names when they differ between a report's points (a preset sweeps the
# heads of two tensor-parallel degrees, say); the lengths, layout and variants are always named.
NAMED_WHEN_THEY_VARY = {"kind": "{}", "heads": "h{}", "kv_heads": "kv{}", "head_dim": "d{}",
                        "dtype": "{}", "direction": "{}"}


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
    if kind == "decode" and r["seq_len"] != "1":
        words.append(f"{r['seq_len']} queries")
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
    if r.get("bound") == "memory" and r.get("pct_of_bandwidth"):
        return f"{float(r['pct_of_bandwidth']):.0f}% of bandwidth ({float(r['tb_per_s']):.2f} TB/s)"
    if r.get("pct_of_peak"):
        return f"{float(r['pct_of_peak']):.0f}% of peak ({float(r['tflops']):.0f} TFLOP/s)"
    return ""


def with_reruns(read, reruns):
    """The report `read` returns, each (point, backend) of a rerun report standing in for its own
    row; points a rerun did not reach (a call cut short) keep their earlier rows."""
    rows, points, by_point, backends = read
    for rerun in reruns:
        new_rows, _, new_by_point, new_backends = rerun
        replaced = {(r["point_id"], r["backend"]) for r in new_rows}
        rows = [r for r in rows if (r["point_id"], r["backend"]) not in replaced] + new_rows
        for p in points:
            by_point[p] = [r for r in by_point[p] if (p, r["backend"]) not in replaced] + new_by_point.get(p, [])
        backends += [b for b in new_backends if b not in backends]
    return rows, points, by_point, backends


def rerun_paths(path, folder):
    """DIR/<name>.<backends>.csv for report <name>.csv (not their .kernels.csv or .samples.csv)."""
    if not folder:
        return []
    name = os.path.basename(path).removesuffix(".csv")
    return sorted(p for p in glob.glob(os.path.join(folder, glob.escape(name) + ".*.csv"))
                  if not p.endswith((".kernels.csv", ".samples.csv")))


def merged(path, mode, reruns_folders=()):
    """A report with its reruns standing in (see with_reruns)."""
    reruns = [read_report(p, mode) for folder in reruns_folders for p in rerun_paths(path, folder)]
    return with_reruns(read_report(path, mode), reruns)


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


def summary(paths, mode, reruns_folders=()):
    """Per preset and kind of point: points, and per backend its wins / its ok rows."""
    print("| preset | points | wins (of the points) and ok rows per backend |")
    print("| --- | --- | --- |")
    for path in paths:
        rows, points, by_point, backends = merged(path, mode, reruns_folders)
        name = os.path.basename(path).removesuffix(".csv")
        kinds = defaultdict(list)
        for p in points:
            kinds[served_kind(by_point[p][0])].append(p)
        for kind, kind_points in kinds.items():
            wins, ok = defaultdict(int), defaultdict(int)
            for p in kind_points:
                fastest = ranked(by_point[p])
                if fastest:
                    wins[fastest[0]["backend"]] += 1
                for r in fastest:
                    ok[r["backend"]] += 1
            counts = ", ".join(f"{b} {wins[b]}/{ok[b]}" for b in sorted(ok, key=lambda b: (-wins[b], -ok[b], b)))
            print(f"| {name}: {kind} | {len(kind_points)} | {counts or 'none ok'} |")


def table(path, mode, reruns_folders=()):
    rows, points, by_point, backends = merged(path, mode, reruns_folders)
    varying = varying_columns(rows)
    name = os.path.basename(path).removesuffix(".csv")
    print(f"### {name} ({mode} mode)\n")
    print("| point | winner | time (ms) | roof | runner-up (x slower) | " + " | ".join(backends) + " |")
    print("| --- " * (5 + len(backends)) + "|")
    for p in points:
        ok = ranked(by_point[p])
        row_cells = cells(by_point[p], backends, lambda r: f"{float(r['time_ms_median']):.3g}"
                          + (" (fed)" if r.get("feed") else "") if r["time_ms_median"] else None)
        head = f"| {shape(by_point[p][0], varying)} | "
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
    for r in rows:
        if r["status"] != "ok":
            refusals[(r["backend"], r["status"])].add(r["reason"])
    if refusals:
        print("Not measured:\n")
        for (b, status), reasons in sorted(refusals.items()):
            for reason in sorted(reasons):
                print(f"- {b} ({status}): {reason}")
        print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--mode", default="graph")
    ap.add_argument("--reruns", action="append", default=[],
                    help="folder of later runs of some backends (see above); repeatable")
    ap.add_argument("--summary", action="store_true", help="one table of wins per preset and kind")
    args = ap.parse_args()
    if args.summary:
        return summary(args.reports, args.mode, args.reruns)
    for path in args.reports:
        table(path, args.mode, args.reruns)


if __name__ == "__main__":
    main()
