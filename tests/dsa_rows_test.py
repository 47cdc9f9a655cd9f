"""DeepSeek's sparse attention through attnbench itself, on the CPU: tests/python_backends/
dsa_cpu.yaml's paged decodes (1 and 2 queries, an fp16 and an fp8 cache), a ragged prefill with
recent tokens favoured, and the indexer; every row of naive, inplace and triton-dsa (under Triton's
interpreter) `ok` against the harness's float64 reference, and each DSA row's checks shown to move
the reference (variant_moves: indices, indices+1, indices-1, rope). Run by ctest from the
repository root (Examples.DsaRowsAreOkThroughTheHarness); exits 77 without Triton."""
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
rows = list(csv.DictReader(open(out))) if os.path.exists(out) else []
failures = []
if run.returncode != 0:
    failures.append(f"attnbench exited {run.returncode}: {run.stderr[-2000:]}")
want = {"naive": 7, "inplace": 7, "triton-dsa": 7}  # triton-dsa refuses the indexer by kind
for backend, count in want.items():
    mine = [r for r in rows if r["backend"] == backend]
    if len(mine) != count:
        failures.append(f"{len(mine)} {backend} rows, not {count}")
for r in rows:
    if r["status"] != "ok" and not (r["backend"] == "triton-dsa" and r["kind"] == "dsa_indexer"):
        failures.append(f"{r['backend']} {r['point_id']}: {r['status']}: {r['reason']}")
    if r["kind"] == "dsa" and r["status"] == "ok":
        for check in ("indices:", "indices+1:", "indices-1:", "rope:"):
            if check not in r["variant_moves"]:
                failures.append(f"{r['backend']} {r['point_id']}: no {check} ({r['variant_moves']})")
        if not r["gbytes"] or float(r["gbytes"]) <= 0:
            failures.append(f"{r['point_id']}: no bytes")
    if r["backend"] == "triton-dsa" and r["kind"] == "dsa_indexer" and \
            "does not run kind dsa_indexer" not in r["reason"]:
        failures.append(f"triton-dsa at the indexer: {r['status']} {r['reason']}")
print("\n".join(failures) or f"{len(rows)} rows as expected")
sys.exit(1 if failures else 0)
