#!/usr/bin/env python3
"""Who wins where: per shape family (prefill per dtype, decode, mixed) how many points each backend
wins; for each point of a report the fastest `ok` backend in one timing mode, its TFLOP/s and the
runner-up's, as a markdown table; and per backend and family the host time per call.

    tools/who_wins.py results/h200/hopper/hopper.csv [--mode cold]

It reads a report as model_table.py does (report_reader.py: the schema, located errors, exit 2 on
what it cannot read; each point's phase from its sequences' lengths; a (point, backend) run with
--repetitions is the median over them). A report with no `ok` row in the mode exits 1.
"""
import argparse
import statistics
import sys
from collections import defaultdict

from model_table import MODES, Merged, phase, ranked, cells  # tools/, beside this file
from report_reader import ReportError, fail, number

TOOL = "who_wins"


def tables(merged):
    """The three tables, as markdown lines."""
    rows, points, by_point, backends = merged.rows, merged.points, merged.by_point, merged.backends

    def family(point):
        r = by_point[point][0]
        kind = phase(r)
        return f"prefill {r['dtype']}" if kind == "prefill" else kind

    def tflops(r):
        v = number(r, "tflops")
        return None if v is None else f"{v:.0f}"

    family_wins = defaultdict(lambda: defaultdict(int))
    family_points = defaultdict(int)
    for p in points:
        family_points[family(p)] += 1
        ok = ranked(by_point[p])
        if ok:
            family_wins[family(p)][ok[0]["backend"]] += 1
    out = ["| shape family | points | winners (points won) |", "| --- | --- | --- |"]
    for f in family_points:
        won = sorted(family_wins[f].items(), key=lambda kv: -kv[1])
        out.append(f"| {f} | {family_points[f]} | " + ", ".join(f"{b} {n}" for b, n in won) + " |")
    out += ["", "| point | winner | time (ms) | TFLOP/s | runner-up | its TFLOP/s | " +
            " | ".join(backends) + " |", "| --- " * (6 + len(backends)) + "|"]
    for p in points:
        ok = ranked(by_point[p])
        row_cells = " | ".join(cells(by_point[p], backends, tflops))
        if not ok:
            out.append(f"| {p} | none | | | | | {row_cells} |")
            continue
        w, second = ok[0], ok[1] if len(ok) > 1 else None
        out.append(f"| {p} | **{w['backend']}** | {number(w, 'time_ms_median'):.4g} | "
                   f"{tflops(w) or ''} | {second['backend'] if second else ''} | "
                   f"{(tflops(second) or '') if second else ''} | {row_cells} |")
    out += ["", "| backend | family | host us per call, median over points | range |",
            "| --- | --- | --- | --- |"]
    for b in backends:
        for f in family_points:
            host = [number(r, "cpu_us_median") for r in rows
                    if r["backend"] == b and r["status"] == "ok" and r.get("cpu_us_median")
                    and family(r["point_id"]) == f]
            if host:
                out.append(f"| {b} | {f} | {statistics.median(host):.1f} | "
                           f"{min(host):.1f}-{max(host):.1f} |")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("--mode", default="cold", choices=MODES)
    args = ap.parse_args(argv)
    try:
        merged = Merged(args.report, args.mode)
        lines = tables(merged)  # every cell read before a line is printed
    except ReportError as e:
        fail(TOOL, str(e))
    print("\n".join(lines))
    if not merged.ranked:
        print(f"{TOOL}: {args.report}: no ok row in {args.mode} mode: nothing ranked",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
