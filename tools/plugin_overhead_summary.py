#!/usr/bin/env python3
"""Reads plugin_overhead_bench's JSON output and prints, per case, the median real time of the
direct call and of the call through the plugin, and their difference (the plugin's cost)."""
import json
import sys

data = json.load(open(sys.argv[1]))
medians = {}
for b in data["benchmarks"]:
    if b.get("aggregate_name") == "median":
        medians[b["run_name"]] = b["real_time"] / (1e3 if b["time_unit"] == "ns" else 1.0)  # -> us
print(f"{'case':16s} {'direct us':>10s} {'plugin us':>10s} {'plugin - direct us':>19s}")
for name, direct in medians.items():
    if not name.startswith("direct/"):
        continue
    case = name[len("direct/"):].replace("/real_time", "")
    plugin = medians.get("plugin/" + case + "/real_time", medians.get("plugin/" + case))
    if plugin is not None:
        print(f"{case:16s} {direct:10.2f} {plugin:10.2f} {plugin - direct:19.2f}")
