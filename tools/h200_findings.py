#!/usr/bin/env python3
"""Prints the findings tables of results/README.md from the committed H200 CSVs.

    python3 tools/h200_findings.py results/h200 > /tmp/findings.md
"""
import csv
import os
import statistics
import sys

ORDER = ["naive", "inplace", "math", "efficient", "flash", "cudnn"]


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(text):
    return float(text) if text not in ("", None) else None


def table(header, body):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in body]
    return "\n".join(out)


def span(values, fmt="{:g}"):
    values = [v for v in values if v is not None]
    if not values:
        return ""
    lo, hi = min(values), max(values)
    return fmt.format(lo) if lo == hi else fmt.format(lo) + "–" + fmt.format(hi)


def main(d):
    seed = [r for r in rows(os.path.join(d, "seed.csv")) if r["status"] == "ok"]
    seed_k = rows(os.path.join(d, "seed.kernels.csv"))
    seqlen = [r for r in rows(os.path.join(d, "sweep-seqlen.csv")) if r["status"] == "ok"]
    seqlen_k = rows(os.path.join(d, "sweep-seqlen.kernels.csv"))
    cold = [r for r in seed if r["timing_mode"] == "cold"]
    print(f"git_sha {seed[0]['git_sha']}, {seed[0]['device_name']}, torch {seed[0]['torch_version']}, "
          f"started {seed[0]['started_at']}\n")

    print("### Operators and GPU activities per call (configs/seed.yaml, 6 points)\n")
    body = []
    for b in ORDER:
        rs = [r for r in cold if r["backend"] == b]
        body.append([b, span([num(r["aten_ops_per_call"]) for r in rs]), rs[0]["aten_ops"],
                     span([num(r["aten_ops_nested_per_call"]) for r in rs]),
                     span([num(r["aten_copies_per_call"]) for r in rs]), span([num(r["kernels_per_call"]) for r in rs]),
                     span([num(r["memcpy_per_call"]) for r in rs]), span([num(r["memset_per_call"]) for r in rs]),
                     span([num(r["peak_mem_mib"]) for r in rs], "{:.0f}")])
    print(table(["backend", "ATen ops", "names", "nested ops", "data copies", "kernels", "memcpy", "memset",
                 "extra MiB"], body))

    print("\n### The hidden copy (naive) and where it goes (inplace)\n")
    body = []
    for r in seed_k:
        if r["kind"] != "kernel" and r["backend"] in ("naive", "inplace"):
            body.append([r["point_id"], r["backend"], r["name"], r["bytes"], r["launches_per_call"], r["duration_us_mean"]])
    print(table(["point", "backend", "activity", "bytes", "per call", "µs (CUPTI)"], body[:8]))

    print("\n### math's kernels at b4-h16-s1024 (bf16 inputs)\n")
    body = []
    for r in seed_k:
        if r["backend"] == "math" and r["point_id"] == "b4-h16-s1024-d64-bf16-causal-cuda":
            body.append([r["name"][:120].replace("|", "/"), r["launches_per_call"], r["duration_us_mean"]])
    print(table(["kernel (first 120 characters)", "per call", "µs"], body))

    print("\n### Fused kernels: resources and theoretical occupancy (seed points)\n")
    body = []
    for b in ["efficient", "flash", "cudnn"]:
        ks = [r for r in seed_k if r["backend"] == b and r["kind"] == "kernel"]
        body.append([b, ks[0]["name"][:70].replace("|", "/"), ks[0]["block"], ks[0]["registers_per_thread"],
                     span([num(r["static_smem_bytes"]) + num(r["dynamic_smem_bytes"]) for r in ks], "{:.0f}"),
                     span([num(r["theoretical_occupancy_pct"]) for r in ks])])
    print(table(["backend", "kernel", "block", "registers", "shared memory (bytes)", "occupancy %"], body))

    print("\n### Host time per call next to GPU time (seed, cold)\n")
    body = []
    for b in ORDER:
        rs = [r for r in cold if r["backend"] == b]
        body.append([b, f"{statistics.median(num(r['cpu_us_median']) for r in rs):.1f}",
                     span([num(r["cpu_us_median"]) for r in rs], "{:.1f}"),
                     span([num(r["time_ms_median"]) * 1e3 for r in rs], "{:.0f}")])
    print(table(["backend", "host µs per call (median of points)", "range", "GPU µs (cold)"], body))

    print("\n### Fastest backend per shape (cold; seed and sweep-seqlen)\n")
    body = []
    for data in (cold, [r for r in seqlen if r["timing_mode"] == "cold"]):
        for pid in dict.fromkeys(r["point_id"] for r in data):
            rs = sorted((r for r in data if r["point_id"] == pid), key=lambda r: num(r["time_ms_median"]))
            t = {r["backend"]: num(r["time_ms_median"]) for r in rs}
            body.append([pid, rs[0]["backend"], f"{t[rs[0]['backend']] * 1e3:.1f}", f"{rs[0]['tflops']}",
                         f"{rs[0]['pct_of_peak']}", f"{t['flash'] / t[rs[0]['backend']]:.2f}",
                         f"{t['efficient'] / t[rs[0]['backend']]:.2f}", f"{t['inplace'] / t[rs[0]['backend']]:.1f}",
                         f"{t['math'] / t[rs[0]['backend']]:.1f}"])
    print(table(["point", "fastest", "µs", "TFLOP/s", "% of peak", "flash ×", "efficient ×", "inplace ×", "math ×"], body))

    print("\n### naive's kernels at large seq_len (sweep-seqlen, head_dim 64)\n")
    body = []
    for r in seqlen:
        if r["backend"] in ("naive", "math") and r["timing_mode"] == "cold" and "-d64-" in r["point_id"]:
            body.append([r["point_id"], r["backend"], r["kernels_per_call"], r["memcpy_per_call"], r["memset_per_call"]])
    print(table(["point", "backend", "kernels", "memcpy", "memset"], body))

    ncu = os.path.join(d, "ncu-compare.csv")
    if os.path.exists(ncu):
        print("\n### attnbench against Nsight Compute (gpu__time_duration.sum, --clock-control none)\n")
        body = [[r["point_id"], r["backend"], r["attnbench_cold_us"], r["ncu_cold_us"], r["diff_cold_pct"],
                 r["attnbench_batch_us"], r["ncu_batch_us"], r["diff_batch_pct"]] for r in rows(ncu)]
        print(table(["point", "backend", "cold µs", "ncu (cache flushed) µs", "Δ %", "batch µs", "ncu (no flush) µs",
                     "Δ %"], body))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results/h200")
