#!/usr/bin/env python3
"""What the harness spent on a run, pass by pass: the pass_seconds column of a report (each
(point, backend)'s passes and their wall seconds in the worker), added up over the run.

    tools/harness_profile.py REPORT.csv [--wall SECONDS]

Prints, per pass, the seconds in all, per (point, backend) and the share of the passes' total;
with --wall (the run's own wall time, `time attnbench run ...`), what lies outside the passes:
starting workers, loading plugins, writing the report.
"""
import argparse
import csv
import sys
from collections import OrderedDict


def pass_seconds(cell):
    """'first call=0.0120;correctness=0.0310' -> [('first call', 0.012), ('correctness', 0.031)]"""
    out = []
    for part in filter(None, cell.split(";")):
        name, _, seconds = part.rpartition("=")
        if not name:
            raise ValueError(f"not NAME=SECONDS: {part!r}")
        out.append((name, float(seconds)))
    return out


def profile(rows):
    """Seconds per pass over the (point, backend, repetition)s of `rows` (one row each counted:
    the timing modes' rows repeat the same cell), and how many there were."""
    totals, seen = OrderedDict(), set()
    for row in rows:
        key = (row["point_id"], row["backend"], row.get("repetition", "0"))
        if key in seen or not row.get("pass_seconds"):
            continue
        seen.add(key)
        for name, seconds in pass_seconds(row["pass_seconds"]):
            totals[name] = totals.get(name, 0.0) + seconds
    return totals, len(seen)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--wall", type=float, help="the run's wall seconds")
    args = parser.parse_args(argv)
    with open(args.report, newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and "pass_seconds" not in rows[0]:
        sys.exit(f"{args.report}: no pass_seconds column (a report of schema 20 or later has it)")
    totals, measured = profile(rows)
    if not measured:
        sys.exit(f"{args.report}: no (point, backend) with pass_seconds")
    passes = sum(totals.values())
    print(f"{measured} (point, backend)s, {passes:.2f} s in passes")
    print(f"{'pass':<16} {'seconds':>9} {'ms each':>9} {'share':>7}")
    for name, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
        print(f"{name:<16} {seconds:>9.3f} {1e3 * seconds / measured:>9.1f} {seconds / passes:>7.1%}")
    if args.wall is not None:
        print(f"{'outside passes':<16} {args.wall - passes:>9.3f} "
              f"{1e3 * (args.wall - passes) / measured:>9.1f} {'':>7}")


if __name__ == "__main__":
    main()
