#!/usr/bin/env python3
"""What the harness spent on a run, pass by pass: the pass_seconds column of a report (each
(point, backend)'s passes and their wall seconds in the worker), added up over the run.

    tools/harness_profile.py REPORT.csv [--wall SECONDS]

Prints, per pass, the seconds in all, per (point, backend) and the share of the passes' total;
with --wall (the run's own wall time, `time attnbench run ...`), what lies outside the passes:
starting workers, loading plugins, writing the report.

A report it cannot read (a folder, a binary, not UTF-8, no header, no schema_version, a schema
without pass_seconds, before 20, or after this tool's), a pass_seconds cell that is not
`NAME=SECONDS;...`, or seconds that are NaN, infinite or below 0 are refused, naming the file and
line: exit 2, nothing summed. A report with no pass_seconds to add up exits 1.
"""
import argparse
import math
import sys
from collections import OrderedDict

from report_reader import ReportError, fail, read_report  # tools/, beside this file

TOOL = "harness_profile"


def pass_seconds(cell, where="pass_seconds"):
    """'first call=0.0120;correctness=0.0310' -> [('first call', 0.012), ('correctness', 0.031)];
    a ValueError naming `where` for a part that is not NAME=SECONDS with finite SECONDS >= 0."""
    out = []
    for part in filter(None, cell.split(";")):
        name, _, seconds = part.rpartition("=")
        if not name:
            raise ValueError(f"{where}: pass_seconds part {part!r} is not NAME=SECONDS")
        try:
            value = float(seconds)
        except ValueError:
            raise ValueError(f"{where}: pass '{name}' took {seconds!r} seconds: not a number") from None
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{where}: pass '{name}' took {seconds} seconds: a pass takes a finite "
                             "time of at least 0 (a broken or hand-edited report)")
        out.append((name, value))
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
        for name, seconds in pass_seconds(row["pass_seconds"], row.get("_where", "a row")):
            totals[name] = totals.get(name, 0.0) + seconds
    return totals, len(seen)


def wall_seconds(text):
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the run's wall seconds, finite and at least 0")
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--wall", type=wall_seconds, help="the run's wall seconds")
    args = parser.parse_args(argv)
    try:
        rows = read_report(args.report, needs=[("pass_seconds", 20)]).rows
        totals, measured = profile(rows)
    except (ReportError, ValueError) as e:
        fail(TOOL, str(e))
    if not measured:
        fail(TOOL, f"{args.report}: no (point, backend) with pass_seconds"
                   + ("" if rows else " (no rows: a header only)"), code=1)
    passes = sum(totals.values())
    print(f"{measured} (point, backend)s, {passes:.2f} s in passes")
    print(f"{'pass':<16} {'seconds':>9} {'ms each':>9} {'share':>7}")
    for name, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
        share = f"{seconds / passes:>7.1%}" if passes > 0 else f"{'':>7}"
        print(f"{name:<16} {seconds:>9.3f} {1e3 * seconds / measured:>9.1f} {share}")
    if args.wall is not None:
        print(f"{'outside passes':<16} {args.wall - passes:>9.3f} "
              f"{1e3 * (args.wall - passes) / measured:>9.1f} {'':>7}")


if __name__ == "__main__":
    main()
