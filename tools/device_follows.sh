#!/usr/bin/env bash
# Issue 45's GPU evidence, after `tools/device_run.sh build-run` on the same machine (with
# ATTNBENCH_BUILD_TARGETS naming measure_tests and the probe plugins kv_copy, page_blind,
# paged_honest, variant_blind): the probes and the paged backends (GpuFollowsInputs), then the
# study's seed sweep (configs/seed.yaml) timed whole with its default passes, without each pass,
# and with the energy pass at every point (energy_min_call_ms: 0), each run's report kept for
# its pass_seconds (tools/harness_profile.py), into $res/harness/.
set -uo pipefail
build=${ATTNBENCH_BUILD:-/tmp/attnbench-build}
res=results/$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && echo h100 || echo h200)
out=$res/harness
mkdir -p "$out" /tmp/attnbench-logs
sha=${ATTNBENCH_GIT_SHA:-unknown}
echo "== $(date +%T) GPU tests"
(cd "$build" && ./measure_tests --gtest_filter="${ATTNBENCH_FOLLOWS_TESTS:-GpuFollowsInputs*}" 2>&1) \
  | tee "$res/gtest-follows-$sha.txt" | grep -E "measured|OK \]|FAILED|Failure" | head -60
[ -n "${ATTNBENCH_SKIP_SEED:-}" ] && exit 0
sed 's/^measurement:/measurement:\n  energy_min_call_ms: 0/' configs/seed.yaml > /tmp/seed-energy.yaml
wall() {  # NAME ARGS...: one run of the seed sweep, its wall seconds appended to seed-wall.txt
  local name=$1; shift
  local start=$(date +%s.%N)
  "$build/attnbench" run "$@" --force --no-summary -o "$out/seed.$name.csv" 2>"/tmp/attnbench-logs/seed.$name.stderr"
  local rc=$?
  echo "$name $(python3 -c "print(round($(date +%s.%N) - $start, 2))") s exit $rc" | tee -a "$out/seed-wall-$sha.txt"
}
all="correctness timing cpu memory ops kernels energy"
wall default configs/seed.yaml
wall default-again configs/seed.yaml
for skip in $all; do
  wall "without-$skip" configs/seed.yaml --passes $(echo $all | tr ' ' '\n' | grep -vx "$skip" | tr '\n' ' ')
done
wall energy-everywhere /tmp/seed-energy.yaml
for f in "$out"/seed.default.csv "$out"/seed.energy-everywhere.csv; do
  echo "== $f"; python3 tools/harness_profile.py "$f" --wall "$(grep "^$(basename "$f" .csv | cut -d. -f2) " "$out/seed-wall-$sha.txt" | awk '{print $2}')"
done 2>&1 | tee "$out/profile-$sha.txt"
