#!/usr/bin/env python3
"""A report of configs/cudnn-fe-published.yaml against cudnn-frontend's published H200 table: per
(mask, pass, backend) and length, the report's TFLOP/s over the table's, from the timed call
(time_ms_median) and, where the kernels pass ran, from the kernels alone (kernel_us_per_call, the
way the table was made), with the kept samples' median SM clock.

    tools/published_table.py results/h200/published/burst.csv [--mode cold]

The table: cudnn-frontend's benchmark/sdpa_benchmark_training README, H200, cuDNN 9.19.1, b1, 64
query heads on 8 kv heads, d128, bf16 (forward causal; backward causal and full).
"""
import argparse
import csv

LENGTHS = [2048, 4096, 8192, 16384, 32768]
CUDNN_BACKENDS = {"cudnn-fe", "cudnn"}  # the table is cuDNN's: other backends get no ratio
PUBLISHED = {  # (causal, direction): TFLOP/s at LENGTHS
    ("true", "fwd"): [484, 591, 644, 673, 688],
    ("true", "bwd"): [370, 474, 541, 579, 581],
    ("false", "bwd"): [504, 560, 594, 612, 572],
}


def number(row, column):
    """The row's value in column as a float, or None where it is empty or missing."""
    text = row.get(column, "")
    return float(text) if text else None


def cell(row, published):
    """'TFLOP/s (ratio), kernels TFLOP/s (ratio) @ MHz' for an ok row, else its status."""
    if row is None:
        return ""
    if row["status"] != "ok" or number(row, "tflops") is None:
        return row["status"]
    tflops = number(row, "tflops")
    text = f"{tflops:.0f}"
    if published:
        text += f" ({tflops / published:.2f})"
    kernel_us, gflop = number(row, "kernel_us_per_call"), number(row, "gflop")
    if kernel_us and gflop:
        kernels = gflop / (kernel_us * 1e-6) / 1e3  # GFLOP over seconds, in TFLOP/s
        text += f", kernels {kernels:.0f}" + (f" ({kernels / published:.2f})" if published else "")
    clock = number(row, "sm_clock_mhz_median")
    if clock:
        text += f" @{clock:.0f}"
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report")
    parser.add_argument("--mode", default="cold", help="timing mode to read (default: cold)")
    args = parser.parse_args()
    rows = [r for r in csv.DictReader(open(args.report)) if r["timing_mode"] == args.mode]
    if not rows:
        raise SystemExit(f"{args.report}: no rows in timing mode {args.mode}")
    key = lambda r: (r["causal"], r["direction"], r["backend"])  # noqa: E731
    groups = list(dict.fromkeys(key(r) for r in rows))
    print("| mask, pass | backend | " + " | ".join(f"{n // 1024}k" for n in LENGTHS) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in LENGTHS) + " |")
    for causal, direction, backend in groups:
        published = PUBLISHED.get((causal, direction)) if backend in CUDNN_BACKENDS else None
        out = []
        for i, n in enumerate(LENGTHS):
            row = next((r for r in rows if key(r) == (causal, direction, backend)
                        and int(r["seq_len"]) == n), None)
            out.append(cell(row, published[i] if published else None))
        mask = "causal" if causal == "true" else "full"
        print(f"| {mask} {direction} | {backend} | " + " | ".join(out) + " |")
    print(f"\n{args.report}: git_sha {rows[0].get('git_sha', '?')}, {rows[0].get('device_name', '?')}")


if __name__ == "__main__":
    main()
