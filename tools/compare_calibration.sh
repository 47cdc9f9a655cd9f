#!/usr/bin/env bash
# How often compare's verdicts are wrong, measured on this machine: three runs of CONFIG with its
# backends and the planted test plugin (tests/planted_plugin). A and B are identical runs (A/A:
# every `better` or `worse` is false); C plants 30% more work in `planted`
# ($ATTNBENCH_PLANTED_SLOWDOWN=0.3): its rows must come out `worse`, the other backends' stay quiet.
# Usage: tools/compare_calibration.sh CONFIG OUTDIR [BUILD]   (writes OUTDIR/{a,b,c}.csv and
# OUTDIR/calibration.txt). A, B and C are made in alternating rounds of one repetition each, as
# many rounds as the config's measurement.repetitions; ATTNBENCH_CALIBRATION_INTERLEAVE=R makes R
# rounds, and 0 makes the three runs one after the other (each with the config's repetitions).
set -euo pipefail
cd "$(dirname "$0")/.."
config=$1 out=$2 build=${3:-build}
mkdir -p "$out/plugins"
cp "$build"/plugins/attnbench_*.so "$build"/tests/planted_plugin/attnbench_planted.so "$out/plugins/"
backends=$(python3 -c "
import sys, re
text = open('$config').read()
m = re.search(r'^backends:\s*\[(.*)\]', text, re.M)
print(','.join([b.strip() for b in m.group(1).split(',')] + ['planted']))")
repetitions=$(python3 -c "
import re
m = re.search(r'^\s+repetitions:\s*(\d+)', open('$config').read(), re.M)
print(m.group(1) if m else 1)")
rounds=${ATTNBENCH_CALIBRATION_INTERLEAVE:-$repetitions}
run() {  # name, planted fraction, extra run options
  ATTNBENCH_PLANTED_SLOWDOWN=$2 "$build/attnbench" run "$config" --plugin-dir "$out/plugins" \
    --backends "$backends" --no-summary -o "$out/$1.csv" "${@:3}" 2>>"$out/$1.stderr" || true
}
rm -f "$out"/{a,b,c}.stderr
if [ "$rounds" -gt 0 ]; then
  # The three runs in turns, one repetition each per round (run --resume --repetitions k adds the
  # k-th): drift over the minutes the calibration takes hits A, B and C alike, as it would a base
  # and a candidate measured in alternation.
  for k in $(seq 1 "$rounds"); do
    mode=--resume; [ "$k" -eq 1 ] && mode=--force
    run a 0 "$mode" --repetitions "$k"
    run b 0 "$mode" --repetitions "$k"
    run c 0.3 "$mode" --repetitions "$k"
  done
else
  run a 0 --force
  run b 0 --force
  run c 0.3 --force
fi
# The median time per call, and its 10th percentile: the calls least disturbed by whatever else
# the machine runs (contention only ever adds time), for shared machines.
metrics=time_ms_median,time_ms_p10
"$build/attnbench" compare "$out/a.csv" "$out/b.csv" --metric "$metrics" --output-format json >"$out/a-b.json" || true
"$build/attnbench" compare "$out/a.csv" "$out/c.csv" --metric "$metrics" --output-format json >"$out/a-c.json" || true
# The same pairs with every row over the first backend's in its own run (compare --normalize-by):
# drift that hits a whole run alike cancels.
reference=${backends%%,*}
"$build/attnbench" compare "$out/a.csv" "$out/b.csv" --normalize-by "$reference" --metric "$metrics" --output-format json >"$out/a-b.normalized.json" || true
"$build/attnbench" compare "$out/a.csv" "$out/c.csv" --normalize-by "$reference" --metric "$metrics" --output-format json >"$out/a-c.normalized.json" || true
python3 - "$out" "$reference" <<'PY' | tee "$out/calibration.txt"
import collections, json, sys
out, reference = sys.argv[1], sys.argv[2]
def rows(name, metric):
    doc = json.load(open(f"{out}/{name}.json"))
    found = [m for m in doc["metrics"] if m["metric"] == metric][0]
    return [r for r in found["rows"] if r["verdict"] != "n/a"]
def report(aa, ac):
    false = [r for r in aa if r["verdict"] in ("better", "worse")]
    print(f"A/A (a vs b): {len(aa)} rows, {len(false)} called better or worse:",
          dict(collections.Counter(r["verdict"] for r in aa)))
    for r in false:
        print(f"  false: {r['point_id']} {r['backend']} {r['timing_mode']} ratio {r['ratio']:.3f} "
              f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}] {r['verdict']}")
    planted = [r for r in ac if r["backend"] == "planted"]
    others = [r for r in ac if r["backend"] != "planted"]
    found = [r for r in planted if r["verdict"] == "worse"]
    print(f"planted 30% (a vs c): {len(found)} of {len(planted)} planted rows worse "
          f"({100 * len(found) / max(1, len(planted)):.0f}%), ratios "
          f"{min(r['ratio'] for r in planted):.3f}..{max(r['ratio'] for r in planted):.3f}")
    quiet = [r for r in others if r["verdict"] in ("better", "worse")]
    print(f"  the other backends: {len(others)} rows, {len(quiet)} called better or worse:",
          dict(collections.Counter(r["verdict"] for r in others)))
for metric in ("time_ms_median", "time_ms_p10"):
    for suffix, title in (("", "as measured"), (".normalized", f"normalized by {reference} in each run")):
        print(f"== {metric}, {title}")
        report(rows("a-b" + suffix, metric), rows("a-c" + suffix, metric))
PY
