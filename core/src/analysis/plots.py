#!/usr/bin/env python3
"""Pictures of attnbench reports, drawn with matplotlib; `attnbench plot` runs this.

  plots.py report REPORT.csv OUT_DIR FORMAT TIMING_MODE
      per family of points (same shape but for batch and sequence lengths): TFLOP/s and time
      against seq_len, one line per backend; and per backend its kernels, copies and memsets
      per call.
  plots.py compare COMPARISON.json OUT_DIR FORMAT
      the ratios of a comparison (`attnbench compare --output-format json`) with their intervals,
      coloured by verdict.

Prints each file it writes. Reads only what the report says: a missing value is left out of a
picture, never drawn as zero.
"""
import csv
import json
import math
import os
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")  # files only: no display on a benchmark machine
import matplotlib.pyplot as plt  # noqa: E402

# What makes two points one family: every problem column (those between `backend` and
# `timing_mode`, the report's field table) but the batch and the lengths (the study keeps batch x
# seq_len^2 constant, so batch moves with seq_len): the kind, MLA's widths, window, softcap, the
# cache's layout and pages, the scale, the length specs. FAMILY_COLUMNS name the usual ones first.
FAMILY_COLUMNS = ["heads", "kv_heads", "head_dim", "dtype", "causal", "device", "direction"]
LENGTH_COLUMNS = {"batch", "seq_len", "seq_len_kv"}
DERIVED_COLUMNS = {"head_dim_v", "v_in_k", "family"}  # read off the others: in the key, not the name
COUNT_COLUMNS = [
    ("kernels_per_call", "kernels"),
    ("memcpy_per_call", "memcpy"),
    ("memset_per_call", "memset"),
    ("aten_copies_per_call", "ATen copies"),
]
VERDICT_COLOURS = {"better": "tab:green", "worse": "tab:red", "same": "tab:grey",
                   "unsure": "tab:orange"}


def number(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def problem_columns(rows):
    """The problem's columns of a report, in its order: from after `backend` to `timing_mode`."""
    header = list(rows[0].keys()) if rows else []
    if "backend" not in header or "timing_mode" not in header:
        return FAMILY_COLUMNS
    return header[header.index("backend") + 1:header.index("timing_mode")]


def family_key(row, columns):
    """The row's family: its kind's `family` column (the point id without the batch and the
    lengths), or in a report without it every problem column but those."""
    if row.get("family"):
        return (row["family"],)
    return tuple(row.get(c, "") for c in columns if c not in LENGTH_COLUMNS)


def default_scale(row):
    """Whether the row's softmax scale is 1/sqrt(head_dim) (no part of a family's name)."""
    scale = number(row.get("scale"))
    width = number(row.get("head_dim")) or 0
    return scale is None or width <= 0 or abs(scale - width ** -0.5) <= 1e-12 * scale


def family_name(row, varying=()):
    """The kind's family (h32-kv8-d128-bf16-causal-cuda), or in a report without it the usual
    columns, then each other column that varies in the report."""
    if row.get("family"):
        return row["family"].translate(str.maketrans("/ ,()", "_____"))
    parts = ["h" + row.get("heads", "?")]
    if row.get("kv_heads") and row.get("kv_heads") != row.get("heads"):
        parts.append("kv" + row["kv_heads"])
    parts += ["d" + row.get("head_dim", "?"), row.get("dtype", "?"),
              "causal" if row.get("causal") == "true" else "full", row.get("device", "?")]
    if row.get("direction", "fwd") != "fwd":
        parts.append(row["direction"])
    for c in varying:
        if c in FAMILY_COLUMNS or c in LENGTH_COLUMNS or c in DERIVED_COLUMNS:
            continue
        if row.get(c, "") == "" or (c == "scale" and default_scale(row)):
            continue
        parts.append(f"{c}{row[c]}")
    # A file name: no path separators or spaces from a length spec or a window.
    return "-".join(parts).translate(str.maketrans("/ ,()", "_____"))


def x_axis(rows):
    """seq_len, or seq_len_kv where only the cache grows (decode)."""
    if len({r["seq_len"] for r in rows}) == 1 and len({r.get("seq_len_kv", "") for r in rows}) > 1:
        return "seq_len_kv"
    return "seq_len"


def median_by(rows, key, column):
    """Median of `column` over rows with the same key (the repetitions of one measurement)."""
    groups = defaultdict(list)
    for r in rows:
        v = number(r.get(column))
        if v is not None and r.get("status") == "ok":
            groups[key(r)].append(v)
    return {k: statistics.median(v) for k, v in groups.items()}


def save(fig, out_dir, name, fmt):
    path = os.path.join(out_dir, f"{name}.{fmt}")
    fig.savefig(path, format=fmt, bbox_inches="tight", dpi=120)
    plt.close(fig)
    print(path)


def report_plots(csv_path, out_dir, fmt, mode):
    """mode: the timing mode to draw (attnbench plot picks the default from the report)."""
    rows = read_rows(csv_path)
    if not rows:
        sys.exit(f"{csv_path}: the report has no rows")
    stem = os.path.splitext(os.path.basename(csv_path))[0]
    modes = {r["timing_mode"] for r in rows}
    if mode not in modes:
        sys.exit(f"{csv_path}: no rows with timing mode '{mode}' (it has {', '.join(sorted(modes))})")
    backends = list(dict.fromkeys(r["backend"] for r in rows))
    columns = problem_columns(rows)
    varying = [c for c in columns if len({r.get(c, "") for r in rows}) > 1]
    families = defaultdict(list)
    for r in rows:
        # CPU rows are `wall`; the chosen CUDA mode picks among the others.
        if r["timing_mode"] == mode or r["timing_mode"] == "wall":
            families[family_key(r, columns)].append(r)

    for frows in families.values():
        family = family_name(frows[0], varying)
        x = x_axis(frows)
        fig, (ax_tflops, ax_time) = plt.subplots(1, 2, figsize=(12, 4.5))
        for backend in backends:
            brows = [r for r in frows if r["backend"] == backend]
            key = lambda r: (int(r[x]), int(r["batch"]))
            tflops = median_by(brows, key, "tflops")
            time_ms = median_by(brows, key, "time_ms_median")
            if not time_ms:
                continue  # unsupported or failed everywhere: the summary says why
            xs = sorted(time_ms)
            ax_time.plot([k[0] for k in xs], [time_ms[k] for k in xs], marker="o", label=backend)
            xt = sorted(tflops)
            ax_tflops.plot([k[0] for k in xt], [tflops[k] for k in xt], marker="o", label=backend)
        batches = sorted({int(r["batch"]) for r in frows})
        note = f"batch {batches[0]}" if len(batches) == 1 else "batch varies with " + x
        for ax, label in ((ax_tflops, "TFLOP/s"), (ax_time, "time per call (ms)")):
            ax.set_xscale("log", base=2)
            ax.set_xlabel(x)
            ax.set_ylabel(label)
            ax.grid(True, which="both", alpha=0.3)
        ax_time.set_yscale("log")
        ax_tflops.legend(fontsize=8)
        fig.suptitle(f"{stem}: {family} ({mode} timing, {note})")
        save(fig, out_dir, f"{stem}.{family}", fmt)

    counts_plot(rows, backends, stem, out_dir, fmt)
    roofline_plot([r for rs in families.values() for r in rs], backends, stem, out_dir, fmt, mode)


def roofline_plot(rows, backends, stem, out_dir, fmt, mode):
    """Achieved TFLOP/s against arithmetic intensity (gflop / gbytes), with the two measured
    ceilings the rows were judged by (read back from pct_of_peak and pct_of_bandwidth)."""
    rows = [r for r in rows if number(r.get("tflops")) and number(r.get("gbytes"))]
    if not rows:
        return
    peaks = [number(r["tflops"]) * 100 / number(r["pct_of_peak"]) for r in rows
             if number(r.get("pct_of_peak")) and r.get("dtype") != "fp8_e4m3"]
    bands = [number(r["tb_per_s"]) * 100 / number(r["pct_of_bandwidth"]) for r in rows
             if number(r.get("pct_of_bandwidth"))]
    fig, ax = plt.subplots(figsize=(7.5, 5))
    intensity = lambda r: number(r["gflop"]) / number(r["gbytes"])
    for backend in backends:
        brows = [r for r in rows if r["backend"] == backend]
        if brows:
            ax.scatter([intensity(r) for r in brows], [number(r["tflops"]) for r in brows],
                       label=backend, s=18)
    xs = sorted(intensity(r) for r in rows)
    lo, hi = xs[0] / 2, xs[-1] * 2
    if peaks and bands:
        peak, band = statistics.median(peaks), statistics.median(bands)  # TFLOP/s, TB/s
        grid = [lo * (hi / lo) ** (i / 200) for i in range(201)]
        ax.plot(grid, [min(peak, band * x) for x in grid], color="black", lw=1,
                label=f"roofs: {peak:.0f} TFLOP/s, {band:.2f} TB/s")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per byte moved)")
    ax.set_ylabel("TFLOP/s")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"{stem}: roofline ({mode} timing)")
    save(fig, out_dir, f"{stem}.roofline", fmt)


def counts_plot(rows, backends, stem, out_dir, fmt):
    """Kernels, copies and memsets per call for each backend; a range where points differ."""
    values = {}
    for backend in backends:
        per_column = {}
        for column, _ in COUNT_COLUMNS:
            seen = [number(r.get(column)) for r in rows
                    if r["backend"] == backend and r.get("status") == "ok"]
            seen = [v for v in seen if v is not None]
            if seen:
                per_column[column] = (min(seen), max(seen))
        if per_column:
            values[backend] = per_column
    if not values:
        return
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(values)), 4.5))
    width = 0.8 / len(COUNT_COLUMNS)
    names = list(values)
    for i, (column, label) in enumerate(COUNT_COLUMNS):
        xs, lows, highs = [], [], []
        for j, backend in enumerate(names):
            if column in values[backend]:
                lo, hi = values[backend][column]
                xs.append(j + (i - (len(COUNT_COLUMNS) - 1) / 2) * width)
                lows.append(lo)
                highs.append(hi)
        if not xs:
            continue
        bars = ax.bar(xs, highs, width, label=label)
        for x, lo, hi, bar in zip(xs, lows, highs, bars):
            text = f"{hi:g}" if lo == hi else f"{lo:g}-{hi:g}"
            ax.annotate(text, (x, hi), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names)
    ax.set_ylabel("per call")
    ax.set_yscale("symlog", linthresh=1)
    ax.legend(fontsize=8)
    ax.set_title(f"{stem}: what each backend puts on the device per call (a-b: differs by point)")
    save(fig, out_dir, f"{stem}.counts", fmt)


def compare_plots(json_path, out_dir, fmt):
    with open(json_path) as f:
        doc = json.load(f)
    stem = "compare"
    for metric in doc["metrics"]:
        rows = [r for r in metric["rows"] if r["ratio"] is not None]
        if not rows:
            continue
        fig, ax = plt.subplots(figsize=(9, max(3, 0.28 * len(rows) + 1.5)))
        for i, r in enumerate(rows):
            colour = VERDICT_COLOURS.get(r["verdict"], "black")
            ax.errorbar(r["ratio"], i,
                        xerr=[[r["ratio"] - r["ci_low"]], [r["ci_high"] - r["ratio"]]],
                        fmt="o", color=colour, capsize=3)
        lows = [r["ci_low"] for r in rows if r["ci_low"] and r["ci_low"] > 0]
        highs = [r["ci_high"] for r in rows if r["ci_high"]]
        if lows and highs and max(highs) / min(lows) > 4:
            ax.set_xscale("log", base=2)  # backends apart by 20x: equal steps for equal factors
        threshold = rows[0]["threshold"]
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.axvspan(1 - threshold, 1 + threshold, color="grey", alpha=0.15,
                   label=f"threshold ±{100 * threshold:g}%")
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([f"{r['point_id']} {r['backend']} {r['timing_mode']}" for r in rows],
                           fontsize=7)
        ax.invert_yaxis()
        better = "higher" if metric["higher_is_better"] else "lower"
        ax.set_xlabel(f"{metric['metric']}: new / base ({better} is better), 95% interval")
        for verdict, colour in VERDICT_COLOURS.items():
            ax.plot([], [], "o", color=colour, label=verdict)
        ax.legend(fontsize=7, loc="best")
        ax.set_title(f"{doc['new']['label']} against {doc['base']['label']}")
        save(fig, out_dir, f"{stem}.{metric['metric']}", fmt)


def main(argv):
    if len(argv) < 5 or argv[1] not in ("report", "compare") or (argv[1] == "report" and len(argv) < 6):
        sys.exit(__doc__)
    kind, source, out_dir, fmt = argv[1:5]
    os.makedirs(out_dir, exist_ok=True)
    if kind == "report":
        report_plots(source, out_dir, fmt, argv[5])
    else:
        compare_plots(source, out_dir, fmt)


if __name__ == "__main__":
    main(sys.argv)
