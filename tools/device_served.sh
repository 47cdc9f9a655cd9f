#!/usr/bin/env bash
# Issue 44's GPU evidence after the served path landed: the GPU tests of the served forms, then
# each 2026 preset with the backends named in $ATTNBENCH_SERVED_BACKENDS (default flashinfer and
# cudnn: the two whose rows the served path and the one-query causal decode changed) into
# $res/served/<model>.<backends>.csv. Run after `tools/device_run.sh build-run` on the same machine
# (ATTNBENCH_BUILD_TARGETS="measure_tests attnbench_plugin_faulty_sink_blind").
set -uo pipefail
build=${ATTNBENCH_BUILD:-/tmp/attnbench-build}
res=results/$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && echo h100 || echo h200)
mkdir -p "$res/served" /tmp/attnbench-logs
backends=${ATTNBENCH_SERVED_BACKENDS:-flashinfer cudnn}
tag=$(echo $backends | tr ' ' '+')
echo "== $(date +%T) GPU tests"
(cd "$build" && ./measure_tests --gtest_filter="${ATTNBENCH_SERVED_TESTS:-GpuServed*:GpuSinks*:GpuFp8Kv*:GpuWorkloads*}" 2>&1) \
  | tee "$res/served/gtest-${ATTNBENCH_GIT_SHA:-unknown}.txt" | grep -E "measured|OK|FAILED|PASSED|Failure" | grep -v " ok " | head -40
# The Triton kernel alone against float64 at the presets' shapes first (no build needed), so a
# call cut short still says whether it is right on this card.
if [[ " $backends " == *" triton-served "* ]]; then
  echo "== $(date +%T) triton-served alone"
  timeout 120 python3 tools/triton_served_gpu_check.py "$res/served/triton-check-${ATTNBENCH_GIT_SHA:-unknown}.csv"
fi
for model in ${ATTNBENCH_SERVED_MODELS:-gpt-oss-120b qwen3-32b qwen3-235b-a22b qwen3.5-397b-a17b llama-4-scout gemma-3-27b glm-4.6}; do
  echo "== $(date +%T) $model ($backends)"
  "$build/attnbench" run "configs/models/$model.yaml" --force --backends $backends --no-summary \
    -o "$res/served/$model.$tag.csv" 2>"/tmp/attnbench-logs/$model.$tag.stderr"
  echo "exit code $?"
  grep -E "\[(error|wrong|oom)\]" "/tmp/attnbench-logs/$model.$tag.stderr" | head -5
done
