#!/usr/bin/env python3
"""Checks attnbench's GPU times of the fused kernels against Nsight Compute.

1. Runs configs/ncu-check.yaml normally (no profiler): attnbench's cold and batch medians.
2. For every (point, backend), runs the same point under
   `ncu --clock-control none --metrics gpu__time_duration.sum` twice: with --cache-control all
   (caches flushed before each kernel, to compare with `cold`) and none (to compare with `batch`),
   skipping the first launches (first call, warm-up) and profiling the next ones.
3. Writes <out>/ncu-check.csv and <out>/ncu-compare.csv and prints the comparison.
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys

KERNEL_REGEX = "regex:flash_fwd|fmha_cutlass|cudnn_generated"


def ncu_durations_us(ncu, attnbench, config, point, backend, cache, skip, count):
    cmd = [ncu, "--clock-control", "none", "--cache-control", cache, "--metrics", "gpu__time_duration.sum",
           "--csv", "--kernel-name", KERNEL_REGEX, "--launch-skip", str(skip), "--launch-count", str(count),
           attnbench, "run", config, "--points", point, "--backends", backend, "--passes", "timing",
           "--timing-modes", "batch", "--no-summary", "--isolation", "none", "--force",
           "-o", "/tmp/ncu-check-scratch.csv"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    lines = [l for l in proc.stdout.splitlines() if l.startswith('"')]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"ncu failed ({proc.returncode}) for {backend} {point}:\n{proc.stderr[-2000:]}\n{proc.stdout[-2000:]}")
    scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3, "second": 1e6, "s": 1e6}
    values, names = [], set()
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        if row["Metric Name"] != "gpu__time_duration.sum":
            continue
        values.append(float(row["Metric Value"].replace(",", "")) * scale[row["Metric Unit"]])
        names.add(row["Kernel Name"][:60])
    return values, names


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attnbench", default="build/attnbench")
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--config", default="configs/ncu-check.yaml")
    ap.add_argument("--out", default="results")
    ap.add_argument("--skip", type=int, default=5, help="launches to skip (first call and warm-up)")
    ap.add_argument("--count", type=int, default=20, help="launches to profile")
    args = ap.parse_args()

    os.makedirs(args.out, exist_ok=True)
    ours_csv = os.path.join(args.out, "ncu-check.csv")
    subprocess.run([args.attnbench, "run", args.config, "-o", ours_csv, "--no-summary", "--force"], check=True)
    ours = {}
    for row in csv.DictReader(open(ours_csv)):
        if row["status"] == "ok":
            ours[(row["point_id"], row["backend"], row["timing_mode"])] = float(row["time_ms_median"]) * 1e3

    out_rows = []
    for point, backend in sorted({(p, b) for p, b, _ in ours}):
        rec = {"point_id": point, "backend": backend}
        for cache, mode in (("all", "cold"), ("none", "batch")):
            values, names = ncu_durations_us(args.ncu, args.attnbench, args.config, point, backend, cache,
                                             args.skip, args.count)
            ncu_us = statistics.median(values)
            ab_us = ours.get((point, backend, mode))
            rec.update({f"ncu_{mode}_us": f"{ncu_us:.2f}", f"ncu_{mode}_kernels": len(values),
                        f"attnbench_{mode}_us": f"{ab_us:.2f}" if ab_us else "",
                        f"diff_{mode}_pct": f"{100 * (ab_us - ncu_us) / ncu_us:+.2f}" if ab_us else "",
                        "kernel": sorted(names)[0] if names else ""})
        out_rows.append(rec)
        print(f"{point:40s} {backend:10s} cold {rec['attnbench_cold_us']:>9s} vs ncu {rec['ncu_cold_us']:>9s} "
              f"({rec['diff_cold_pct']}%)  batch {rec['attnbench_batch_us']:>9s} vs ncu {rec['ncu_batch_us']:>9s} "
              f"({rec['diff_batch_pct']}%)", flush=True)

    compare_csv = os.path.join(args.out, "ncu-compare.csv")
    with open(compare_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(out_rows[0].keys()))
        w.writeheader()
        w.writerows(out_rows)
    print("wrote", ours_csv, "and", compare_csv)
    worst = max(abs(float(r[f"diff_{m}_pct"])) for r in out_rows for m in ("cold", "batch") if r[f"diff_{m}_pct"])
    print(f"largest |difference|: {worst:.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
