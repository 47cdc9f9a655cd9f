#!/usr/bin/env python3
"""Who wins where: per shape family (prefill per dtype, decode) how many points each backend wins;
for each point of a report the fastest `ok` backend in one timing mode, its TFLOP/s and the
runner-up's, as a markdown table; and per backend and family the host time per call.

    tools/who_wins.py results/h200/hopper/hopper.csv [--mode cold]
"""
import argparse
import csv
import statistics
from collections import defaultdict


def read_report(path, mode):
    """The rows of one timing mode (and CPU rows), their points in report order, the rows of each
    point, and the backends in report order."""
    rows = [r for r in csv.DictReader(open(path)) if r["timing_mode"] in (mode, "wall")]
    points, by_point = [], defaultdict(list)
    for r in rows:
        if r["point_id"] not in by_point:
            points.append(r["point_id"])
        by_point[r["point_id"]].append(r)
    return rows, points, by_point, list(dict.fromkeys(r["backend"] for r in rows))


# A point is a decode when each sequence brings a few queries (speculative or multi-token decode
# brings 2-8) against a longer cache; a ragged query batch is a prefill.
DECODE_MAX_QUERIES = 16


def phase(r):
    """'decode', 'prefill' or 'mixed' (prefills and decodes in one call), as a serving engine
    would call the point."""
    if "+" in r.get("seq_lens", ""):
        return "mixed"
    s = int(r["seq_len"])
    if not r.get("seq_lens") and s <= DECODE_MAX_QUERIES and s < int(r["seq_len_kv"]):
        return "decode"
    return "prefill"


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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("--mode", default="cold")
    args = ap.parse_args()
    rows, points, by_point, backends = read_report(args.report, args.mode)

    def family(point):
        r = by_point[point][0]
        return "decode" if phase(r) == "decode" else f"prefill {r['dtype']}"

    family_wins = defaultdict(lambda: defaultdict(int))
    family_points = defaultdict(int)
    for p in points:
        family_points[family(p)] += 1
        ok = ranked(by_point[p])
        if ok:
            family_wins[family(p)][ok[0]["backend"]] += 1
    print("| shape family | points | winners (points won) |")
    print("| --- | --- | --- |")
    for f in family_points:
        won = sorted(family_wins[f].items(), key=lambda kv: -kv[1])
        print(f"| {f} | {family_points[f]} | " + ", ".join(f"{b} {n}" for b, n in won) + " |")
    print()
    print(f"| point | winner | time (ms) | TFLOP/s | runner-up | its TFLOP/s | " +
          " | ".join(backends) + " |")
    print("| --- " * (6 + len(backends)) + "|")
    for p in points:
        ok = ranked(by_point[p])
        row_cells = cells(by_point[p], backends,
                          lambda r: f"{float(r['tflops']):.0f}" if r["tflops"] else None)
        if not ok:
            print(f"| {p} | none | | | | | " + " | ".join(row_cells) + " |")
            continue
        w = ok[0]
        second = ok[1] if len(ok) > 1 else None
        print(f"| {p} | **{w['backend']}** | {float(w['time_ms_median']):.4g} | "
              f"{float(w['tflops']):.0f} | {second['backend'] if second else ''} | "
              f"{float(second['tflops']):.0f} | " if second else
              f"| {p} | **{w['backend']}** | {float(w['time_ms_median']):.4g} | "
              f"{float(w['tflops']):.0f} | | | ", end="")
        print(" | ".join(row_cells) + " |")
    print()
    print("| backend | family | host us per call, median over points | range |")
    print("| --- | --- | --- | --- |")
    for b in backends:
        for f in family_points:
            host = [float(r["cpu_us_median"]) for r in rows
                    if r["backend"] == b and r["status"] == "ok" and r["cpu_us_median"]
                    and family(r["point_id"]) == f]
            if host:
                print(f"| {b} | {f} | {statistics.median(host):.1f} | "
                      f"{min(host):.1f}-{max(host):.1f} |")


if __name__ == "__main__":
    main()
