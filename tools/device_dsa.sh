#!/usr/bin/env bash
# Issue 54's GPU evidence, DeepSeek sparse attention: its GPU tests (every DSA backend against
# float64, the misreading probe wrong), then the DSA presets with the backends that run it and the
# indexer, into $res/dsa/ (results/h100 or h200). Carry .whl (flashinfer-data.tar.xz: FlashInfer's
# headers, `tools/setup.sh device-deps` makes it; the sgl-flash-mla wheel). Steps by name: build,
# tests, deepseek-v3.2, indexer, glm-5 (default: all but build), each packed into $OUT/dsa.tgz as it ends so that a call cut short keeps what it finished;
# each run within $ATTNBENCH_DSA_STEP_S seconds (150; its rows so far are kept).
set -uo pipefail
build=${ATTNBENCH_BUILD:-/tmp/attnbench-build}
res=results/$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && echo h100 || echo h200)
sha=${ATTNBENCH_GIT_SHA:-unknown}
mkdir -p "$res/dsa" /tmp/attnbench-logs
export PATH=/opt/torch/.venv/bin:$PATH
# What the build step installed (each step is its own process: the build's export ends with it).
[ -d /tmp/site ] && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
[ -d /tmp/flashinfer-data ] && export ATTNBENCH_FLASHINFER_DATA=/tmp/flashinfer-data
backends=${ATTNBENCH_DSA_BACKENDS:-flashinfer,triton-dsa,flashmla}
# $ATTNBENCH_DSA_PASSES (e.g. "--passes correctness,timing") leaves out passes a short call cannot pay.
passes=${ATTNBENCH_DSA_PASSES:-}
pack() { [ -n "${OUT:-}" ] && tar czf "$OUT/dsa.tgz" "$res/dsa" -C /tmp attnbench-logs; }
mkdir -p /tmp/attnbench-logs
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total,driver_version --format=csv | tee "$res/dsa/card-$sha.txt"
for step in ${*:-tests deepseek-v3.2 indexer glm-5}; do
  [ "$step" = build ] || [ -x "$build/attnbench" ] || { echo "no build in $build: run the build step"; exit 1; }
  echo "== $(date +%T) $step"
  case $step in
    build)
      # What the steps need, from a bare machine: the carried wheels (sgl-flash-mla) and FlashInfer's
      # headers, and a build with FlashInfer's MLA kernel and one instance of each other family
      # (the DSA runs need no other; a full build takes minutes more).
      python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \
        && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
      mkdir -p /tmp/flashinfer-data && tar xJf .whl/flashinfer-data.tar.xz -C /tmp/flashinfer-data \
        && export ATTNBENCH_FLASHINFER_DATA=/tmp/flashinfer-data
      # $ATTNBENCH_DSA_HOPPER=OFF: no FlashInfer (its MLA kernel is a minute of nvcc), the Python
      # backends and the textbook ones only.
      cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DATTNBENCH_HOPPER_PLUGINS=${ATTNBENCH_DSA_HOPPER:-ON} -DATTNBENCH_ENABLE_TESTS=${ATTNBENCH_DSA_TESTS:-ON} \
        -DCMAKE_PREFIX_PATH="$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')" \
        -DATTNBENCH_FLASHINFER_PREFILL=128:true -DATTNBENCH_FLASHINFER_DECODE=128 \
        -DATTNBENCH_FLASHINFER_SERVED=128 >/tmp/attnbench-logs/cmake.log 2>&1 || tail -20 /tmp/attnbench-logs/cmake.log
      ninja -C "$build" -j16 ${ATTNBENCH_DSA_TARGETS:-attnbench_runnable measure_tests attnbench_plugin_faulty_dsa_blind} \
        >/tmp/attnbench-logs/build.log 2>&1 || grep -E "error|FAILED" -A3 /tmp/attnbench-logs/build.log | head -40
      tail -1 /tmp/attnbench-logs/build.log ;;
    tests)
      (cd "$build" && timeout 120 ./measure_tests --gtest_filter='GpuDsa*:Dsa*' 2>&1) | tee "$res/dsa/gtest-$sha.txt" \
        | grep -E "measured|OK|FAILED|PASSED|Failure|skipped" | head -60 ;;
    indexer)
      # batch timing: the textbook indexer reads its selection's count on the host (a sync).
      timeout "${ATTNBENCH_DSA_STEP_S:-150}" "$build/attnbench" run configs/dsa-indexer.yaml --force --no-summary $passes --timing-modes batch \
        -o "$res/dsa/dsa-indexer.csv" 2>"/tmp/attnbench-logs/indexer.stderr"
      echo "exit code $?"
      "$build/attnbench" summary "$res/dsa/dsa-indexer.csv" 2>&1 | tail -12 ;;
    *)
      cfg=configs/models/$step.yaml
      [ -f "$cfg" ] || { echo "no $cfg"; continue; }
      timeout "${ATTNBENCH_DSA_STEP_S:-150}" "$build/attnbench" run "$cfg" --force --backends "$backends" --no-summary $passes \
        -o "$res/dsa/$step.csv" 2>"/tmp/attnbench-logs/$step.stderr"
      echo "exit code $?"
      grep -E "\[(error|wrong|oom|timeout|crashed)\]" "/tmp/attnbench-logs/$step.stderr" | head -8
      "$build/attnbench" summary "$res/dsa/$step.csv" 2>&1 | tail -40 ;;
  esac
  pack
done
