"""examples/python-backends/triton_served.py through attnbench itself, on the CPU under Triton's
interpreter: tests/python_backends/triton_served_cpu.yaml's paged decodes (1 and 4 queries, an fp16
and an fp8 cache, pages shuffled), a mixed batch, sinks with a window, and a chunk; every row of
triton-served `ok` against the harness's float64 reference, its table scattered, its inputs moved
between calls, each variant shown to move the reference (variant_moves). Run by ctest from the
repository root (Examples.TritonServedRowsAreOkThroughTheHarness); exits 77 without Triton."""
import csv
import os
import subprocess
import sys

try:
    import triton  # noqa: F401
except ImportError:
    print("no triton: skipped")
    sys.exit(77)
attnbench, config, out = sys.argv[1:4]
env = dict(os.environ, TRITON_INTERPRET="1")
run = subprocess.run([attnbench, "run", config, "--force", "--no-summary", "-o", out], env=env,
                     capture_output=True, text=True)
rows = [r for r in csv.DictReader(open(out)) if r["backend"] == "triton-served"]
failures = []
if run.returncode != 0:
    failures.append(f"attnbench exited {run.returncode}: {run.stderr[-2000:]}")
if len(rows) != 9:
    failures.append(f"{len(rows)} triton-served rows, not 9")
for r in rows:
    if r["status"] != "ok":
        failures.append(f"{r['point_id']}: {r['status']}: {r['reason']}")
    # Each variant the point has was shown to matter (far past the tolerance) and was applied.
    for variant in ("sinks", "window", "chunk"):
        if f"-{variant if variant != 'window' else 'win'}" in r["point_id"] and \
                f"{variant}:" not in r["variant_moves"]:
            failures.append(f"{r['point_id']}: no {variant} in variant_moves ({r['variant_moves']})")
    if "kvfp8_e4m3" in r["point_id"] and "fp8_v_scale:" not in r["variant_moves"]:
        failures.append(f"{r['point_id']}: the fp8 cache's v scale not checked ({r['variant_moves']})")
print("\n".join(failures) or f"{len(rows)} rows ok")
sys.exit(1 if failures else 0)
