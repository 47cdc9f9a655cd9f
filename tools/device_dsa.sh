#!/usr/bin/env bash
# Issue 54's GPU evidence, DeepSeek sparse attention: its GPU tests (every DSA backend against
# float64, the misreading probe wrong), then the DSA presets with the backends that run it, into
# $res/dsa/ (results/h100 or h200). Run after `tools/device_run.sh build-run` on the same machine
# (ATTNBENCH_BUILD_TARGETS="measure_tests attnbench_plugin_faulty_dsa_blind"); carry .whl (the
# FlashInfer headers, the sgl-flash-mla wheel). Steps by name: tests, deepseek-v3.2, glm-5 (default:
# all), each packed into $OUT/dsa.tgz as it ends so that a call cut short keeps what it finished.
set -uo pipefail
build=${ATTNBENCH_BUILD:-/tmp/attnbench-build}
res=results/$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && echo h100 || echo h200)
sha=${ATTNBENCH_GIT_SHA:-unknown}
mkdir -p "$res/dsa" /tmp/attnbench-logs
export PATH=/opt/torch/.venv/bin:$PATH
backends=${ATTNBENCH_DSA_BACKENDS:-flashinfer,triton-dsa,flashmla}
pack() { [ -n "${OUT:-}" ] && tar czf "$OUT/dsa.tgz" "$res/dsa" -C /tmp attnbench-logs; }
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total,driver_version --format=csv | tee "$res/dsa/card-$sha.txt"
for step in ${*:-tests deepseek-v3.2 glm-5}; do
  echo "== $(date +%T) $step"
  case $step in
    tests)
      (cd "$build" && ./measure_tests --gtest_filter='GpuDsa*:Dsa*' 2>&1) | tee "$res/dsa/gtest-$sha.txt" \
        | grep -E "measured|OK|FAILED|PASSED|Failure|skipped" | head -60 ;;
    *)
      cfg=configs/models/$step.yaml
      [ -f "$cfg" ] || { echo "no $cfg"; continue; }
      "$build/attnbench" run "$cfg" --force --backends "$backends" --no-summary \
        -o "$res/dsa/$step.csv" 2>"/tmp/attnbench-logs/$step.stderr"
      echo "exit code $?"
      grep -E "\[(error|wrong|oom|timeout|crashed)\]" "/tmp/attnbench-logs/$step.stderr" | head -8
      "$build/attnbench" summary "$res/dsa/$step.csv" 2>&1 | tail -40 ;;
  esac
  pack
done
