#!/usr/bin/env python3
"""Host time per call between identical runs (tools/device_run.sh hosttime): per run the median
host_mhz, preemptions and migrations per call; per pair of runs each backend's median ratio of
cpu_us_median and of host_mhz, and how many rows compare flagged."""
import csv
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

folder = Path(sys.argv[1])
runs = {}
for path in sorted(p for p in folder.glob("*.csv") if "." not in p.stem):  # not kernels/samples
    rows = [r for r in csv.DictReader(open(path)) if r["status"] == "ok" and r["timing_mode"] in ("cold", "wall")]
    runs[path.stem] = {(r["point_id"], r["backend"]): r for r in rows}
    num = lambda col: [float(r[col]) for r in rows if r[col]]
    print(f"run {path.stem}: host_mhz median {statistics.median(num('host_mhz')):.0f} "
          f"(min {min(num('host_mhz')):.0f}, max {max(num('host_mhz')):.0f}), "
          f"preempted/call {statistics.mean(num('host_preempted_per_call')):.3f}, "
          f"migrated/call {statistics.mean(num('host_migrated_per_call')):.3f}")
names = sorted(runs)
for other in names[1:]:
    a, b = runs[names[0]], runs[other]
    cpu, mhz = defaultdict(list), defaultdict(list)
    for key in a.keys() & b.keys():
        cpu[key[1]].append(float(b[key]["cpu_us_median"]) / float(a[key]["cpu_us_median"]))
        mhz[key[1]].append(float(b[key]["host_mhz"]) / float(a[key]["host_mhz"]))
    print(f"{other} / {names[0]}: " + ", ".join(
        f"{k} cpu_us x{statistics.median(v):.2f} (host_mhz x{statistics.median(mhz[k]):.2f})"
        for k, v in sorted(cpu.items())))
    comparison = folder / f"{names[0]}-{other}.json"
    if comparison.exists():
        rows = json.load(open(comparison))["metrics"][0]["rows"]
        verdicts = defaultdict(int)
        flagged = sum(1 for r in rows if "host_" in r["flags"])
        for r in rows:
            verdicts[r["verdict"]] += 1
        print(f"  compare {names[0]} {other} --metric cpu_us_median: {dict(verdicts)}, "
              f"{flagged} of {len(rows)} rows flagged host_clock_differs/host_preempted")
