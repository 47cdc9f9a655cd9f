#!/usr/bin/env python3
"""Who wins where: for each point of a report, the fastest `ok` backend in one timing mode, its
TFLOP/s and the runner-up's, as a markdown table; and per backend the host time per call.

    tools/who_wins.py results/h200/hopper/hopper-prefill.csv [--mode cold]
"""
import argparse
import csv
import statistics
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("--mode", default="cold")
    args = ap.parse_args()
    rows = [r for r in csv.DictReader(open(args.report)) if r["timing_mode"] in (args.mode, "wall")]
    points, by_point = [], defaultdict(list)
    for r in rows:
        if r["point_id"] not in by_point:
            points.append(r["point_id"])
        by_point[r["point_id"]].append(r)
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    print(f"| point | winner | time (ms) | TFLOP/s | runner-up | its TFLOP/s | " +
          " | ".join(backends) + " |")
    print("| --- " * (6 + len(backends)) + "|")
    for p in points:
        ok = sorted((r for r in by_point[p] if r["status"] == "ok" and r["time_ms_median"]),
                    key=lambda r: float(r["time_ms_median"]))
        cells = []
        for b in backends:
            r = next((x for x in by_point[p] if x["backend"] == b), None)
            if r is None:
                cells.append("")
            elif r["status"] == "ok" and r["tflops"]:
                cells.append(f"{float(r['tflops']):.0f}")
            else:
                cells.append(r["status"])
        if not ok:
            print(f"| {p} | none | | | | | " + " | ".join(cells) + " |")
            continue
        w = ok[0]
        second = ok[1] if len(ok) > 1 else None
        print(f"| {p} | **{w['backend']}** | {float(w['time_ms_median']):.4g} | "
              f"{float(w['tflops']):.0f} | {second['backend'] if second else ''} | "
              f"{float(second['tflops']):.0f} | " if second else
              f"| {p} | **{w['backend']}** | {float(w['time_ms_median']):.4g} | "
              f"{float(w['tflops']):.0f} | | | ", end="")
        print(" | ".join(cells) + " |")
    print()
    print("| backend | host us per call, median over points | range | wins |")
    print("| --- | --- | --- | --- |")
    wins = defaultdict(int)
    for p in points:
        ok = sorted((r for r in by_point[p] if r["status"] == "ok" and r["time_ms_median"]),
                    key=lambda r: float(r["time_ms_median"]))
        if ok:
            wins[ok[0]["backend"]] += 1
    for b in backends:
        host = [float(r["cpu_us_median"]) for r in rows
                if r["backend"] == b and r["status"] == "ok" and r["cpu_us_median"]]
        if host:
            print(f"| {b} | {statistics.median(host):.1f} | {min(host):.1f}-{max(host):.1f} | "
                  f"{wins[b]} |")
        else:
            print(f"| {b} | | | {wins[b]} |")


if __name__ == "__main__":
    main()
