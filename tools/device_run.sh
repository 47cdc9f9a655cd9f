#!/usr/bin/env bash
# Builds attnbench on the GPU machine and runs the named steps, copying results to $OUT.
# Usage (from the repository root there): tools/device_run.sh STEP... with steps among
#   deps build tests gpu-tests variants source mla models models-prefill published seed study hosttime seqlen dtypes decode gqa training example clocks calibrate ncu bench smoke faults probes isolation hopper hopper-check hopper-prefill hopper-decode memory-check seed-aa run:NAME gtest:FILTER
# tests writes results/h200/tests.txt (ctest) and results/h200/gpu-tests.txt (the GPU tests' own output).
# The device machine has no .git: pass the commit as ATTNBENCH_GIT_SHA.
set -uo pipefail
src=$(pwd)
build=${ATTNBENCH_BUILD:-/tmp/attnbench-build}
out=/tmp/attnbench-logs  # logs; packed with results/h200 into $OUT/run.tgz at the end
mkdir -p "$out" results/h200
export PATH=/opt/torch/.venv/bin:$PATH
log() { echo "== $(date +%T) $*"; }
# Whether a report holds rows of this commit ($ATTNBENCH_GIT_SHA).
of_this_commit() { grep -qs ",${ATTNBENCH_GIT_SHA:-none}," "$1"; }
# The Hopper plugins' dependencies travel with the call in .whl/ (the machine has no network;
# `tools/setup.sh device-deps` fills it): wheels installed into /tmp/site (fa3 finds its library
# through $PYTHONPATH), the cuDNN frontend's headers used from where they are (cudnn-fe).
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
# tokenspeed-fa3 (FA3 with paged KV, local attention and fp16; 28 MB of xz) travels in a call of its
# own in .whl2/, beside the build a previous call left: unpacked beside fa3-fwd, both are loaded.
if [ -f .whl2/tokenspeed-fa3.tar.xz ]; then
  mkdir -p /tmp/site && tar xJf .whl2/tokenspeed-fa3.tar.xz -C /tmp/site \
    && cp .whl2/tokenspeed-flash_attn_config.py /tmp/site/flash_attn_config.py \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
[ -f .whl/cudnn-frontend/include/cudnn_frontend.h ] && export ATTNBENCH_CUDNN_FRONTEND_INCLUDE=$src/.whl/cudnn-frontend/include
if [ -f .whl/flashinfer-data.tar.xz ]; then
  mkdir -p /tmp/flashinfer-data && tar xJf .whl/flashinfer-data.tar.xz -C /tmp/flashinfer-data \
    && export ATTNBENCH_FLASHINFER_DATA=/tmp/flashinfer-data
fi
# A calibration made by an earlier call on this warm machine outlives the tree's copy, which each
# call brings afresh: the models then judge bandwidth against this card's ceiling of today.
[ -d /tmp/attnbench-calibration ] && cp /tmp/attnbench-calibration/*.json results/calibration/ 2>/dev/null
# Where this card's results go: results/h100 or results/h200 (the steps written before H100s came
# write results/h200 and are moved by hand).
res=results/$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -q H100 && echo h100 || echo h200)
mkdir -p "$res"
for step in "$@"; do
  case $step in
    build|build-run)
      log "$step"  # build-run: only what `attnbench run` needs (no tests), for a short call
      cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')" >"$out/cmake.log" 2>&1 \
        || { tail -30 "$out/cmake.log"; exit 1; }
      # build-run: $ATTNBENCH_BUILD_TARGETS adds targets (the probe plugins, say) to the runnable ones.
      targets=; [ "$step" = build-run ] && targets="attnbench_runnable ${ATTNBENCH_BUILD_TARGETS:-}"
      ninja -C "$build" -j16 $targets >"$out/build.log" 2>&1 || { grep -E "error|FAILED" -A3 "$out/build.log" | head -60; exit 1; }
      ;;
    tests)
      log tests
      (cd "$build" && ctest --output-on-failure -j4 2>&1) | tee results/h200/tests.txt | tail -40
      # The GPU tests once more with everything they print (the measured counts), for the record.
      (cd "$build" && ./measure_tests --gtest_filter='Gpu*' 2>&1) | tee results/h200/gpu-tests.txt | grep -E "measured|OK|FAILED|PASSED"
      ;;
    gpu-tests)
      log gpu-tests  # the GPU tests alone (after build-run with ATTNBENCH_BUILD_TARGETS=measure_tests), for a short call
      (cd "$build" && ./measure_tests --gtest_filter='Gpu*' 2>&1) | tee results/h200/gpu-tests.txt | grep -E "measured|OK|FAILED|PASSED"
      ;;
    variants)
      log variants  # the served variants per backend (and the Hopper kinds) against float64, with what each row said
      (cd "$build" && ./measure_tests --gtest_filter='GpuVariants*:GpuHopper*' 2>&1) | tee results/h200/variants-tests.txt \
        | grep -E "measured|skipped|OK|FAILED|PASSED|Failure|error" | head -60
      ;;
    source)
      log source  # the source kind: the example .cu compiled on first use (nvcc, sm_90a), then cached
      mkdir -p results/h200/source
      export ATTNBENCH_CACHE_DIR=/tmp/attnbench-cache
      { "$build/attnbench" run examples/custom-cuda-attention/source.yaml --force 2>&1 | tail -25
        echo "--- again (cached):"
        "$build/attnbench" run examples/custom-cuda-attention/source.yaml --force -o "$out/source-again.csv" 2>&1 | grep -E "compil"
      } | tee results/h200/source/wmma-source.log
      ;;
    smoke)
      log smoke
      "$build/attnbench" run configs/tiny.yaml --force -o "$out/tiny.csv" 2>&1 | tail -40
      ;;
    seed)
      log seed
      /usr/bin/time -v "$build/attnbench" run configs/seed.yaml --force -o results/h200/seed.csv 2>"$out/seed.stderr" | tee "$out/seed.summary"
      grep -E "Elapsed|Maximum resident" "$out/seed.stderr"; grep -v "^\[" "$out/seed.stderr" | grep -v "Elapsed\|Command\|time\|size\|faults\|switches\|File system\|Socket\|Signals\|Swaps\|Exit\|Percent\|Page\|Average" | head
      ;;
    study)
      log study
      # The study's loop on the seed sweep: its predictions judged (--check: exit 1 on a miss), a
      # trace per (point, backend), and the pictures of the report and of backends against flash.
      "$build/attnbench" run configs/seed.yaml --force --trace --check -o results/h200/study/seed.csv 2>"$out/study.stderr" \
        | tee results/h200/study/seed.summary.txt | head -40
      echo "exit code ${PIPESTATUS[0]} (1: a prediction missed)" | tee -a results/h200/study/seed.summary.txt
      "$build/attnbench" plot results/h200/study/seed.csv
      "$build/attnbench" plot results/h200/study/seed.csv --baseline flash -o results/h200/study/seed.plots/against-flash
      du -sh results/h200/study/seed.traces
      ;;
    hosttime)
      log hosttime
      # Host time per call run to run: the seed sweep three times back to back, with the core's
      # clock and preemptions per row, and how compare judges host time between them.
      mkdir -p results/h200/host-time
      for run in a b c; do
        "$build/attnbench" run configs/seed.yaml --force --no-summary -o "results/h200/host-time/$run.csv" 2>"$out/hosttime-$run.stderr"
      done
      for pair in "a b" "a c"; do
        set -- $pair
        "$build/attnbench" compare "results/h200/host-time/$1.csv" "results/h200/host-time/$2.csv" --metric cpu_us_median \
          --output-format json >"results/h200/host-time/$1-$2.json"
      done
      python3 tools/host_time_summary.py results/h200/host-time | tee results/h200/host-time/summary.txt
      ;;
    seqlen)
      log seqlen
      "$build/attnbench" run configs/sweep-seqlen.yaml --force -o results/h200/sweep-seqlen.csv 2>"$out/seqlen.stderr" | tee "$out/seqlen.summary"
      ;;
    hopper)
      log hopper
      # Every backend at the Hopper shapes in one report; --resume: a second call continues a
      # sweep the first one's time limit cut short.
      mkdir -p results/h200/hopper
      resume=--force; [ -f results/h200/hopper/hopper.csv ] && resume=--resume
      "$build/attnbench" run configs/hopper.yaml $resume -o results/h200/hopper/hopper.csv 2>"$out/hopper.stderr" \
        | tee results/h200/hopper/hopper.summary.txt | tail -30
      echo "exit code ${PIPESTATUS[0]}" | tee -a results/h200/hopper/hopper.summary.txt
      ;;
    hopper-check|hopper-prefill|hopper-decode)
      log "$step"
      mkdir -p results/h200/hopper
      check=; [ "$step" = hopper-check ] && check=--check  # its predictions are what the H200 showed
      "$build/attnbench" run "configs/$step.yaml" --force $check -o "results/h200/hopper/$step.csv" 2>"$out/$step.stderr" \
        | tee "results/h200/hopper/$step.summary.txt" | tail -70
      echo "exit code ${PIPESTATUS[0]}" | tee -a "results/h200/hopper/$step.summary.txt"
      ;;
    decode|gqa|training)
      log "$step"
      # --resume: a second call continues a sweep the first one's time limit cut short.
      resume=--force; [ -f "results/h200/$step.csv" ] && resume=--resume
      "$build/attnbench" run "configs/$step.yaml" $resume -o "results/h200/$step.csv" 2>"$out/$step.stderr" | tee "$out/$step.summary" | tail -60
      echo "exit code ${PIPESTATUS[0]}"
      ;;
    example)
      log example
      # The out-of-tree example built against an installed attnbench (tools/check_install.sh runs
      # its check sweep), then measured next to flash and cudnn with the installed binary.
      work=/tmp/attnbench-example
      rm -rf "$work"
      tools/check_install.sh "$build" "$work" 2>&1 | tail -50
      cp "$work/check.csv" results/h200/wmma-check.csv; cp "$work/check.kernels.csv" results/h200/wmma-check.kernels.csv
      export ATTNBENCH_PLUGIN_PATH="$work/example/plugins"
      for c in seed sweep-seqlen; do
        "$work/prefix/bin/attnbench" run "configs/$c.yaml" --backends wmma,flash,cudnn --force \
          -o "results/h200/wmma-$c.csv" 2>"$out/wmma-$c.stderr" | tee "$out/wmma-$c.summary" | tail -45
      done
      unset ATTNBENCH_PLUGIN_PATH
      ;;
    clocks)
      log clocks
      # The seed sweep with the GPU's clock, power and temperature per row, and its Google
      # Benchmark JSON.
      "$build/attnbench" run configs/seed.yaml --force -o results/h200/clocks-seed.csv 2>"$out/clocks.stderr" | tail -5
      "$build/attnbench" export results/h200/clocks-seed.csv --format gbench --force -o results/h200/clocks-seed.gbench.json
      ;;
    calibration)
      log calibration
      # A, B and C in alternating rounds of one repetition each (5 unless
      # ATTNBENCH_CALIBRATION_INTERLEAVE says otherwise): compare judges on the repetitions.
      ATTNBENCH_CALIBRATION_INTERLEAVE=${ATTNBENCH_CALIBRATION_INTERLEAVE:-5} \
        tools/compare_calibration.sh configs/seed.yaml /tmp/attnbench-calibration "$build" | tail -40
      mkdir -p results/h200/compare-calibration
      cp /tmp/attnbench-calibration/{calibration.txt,a-b.json,a-c.json,a-b.normalized.json,a-c.normalized.json,a.csv,b.csv,c.csv} \
        results/h200/compare-calibration/
      ;;
    dtypes)
      log dtypes
      "$build/attnbench" run configs/dtypes.yaml --force -o results/h200/dtypes.csv 2>"$out/dtypes.stderr" | tee "$out/dtypes.summary"
      ;;
    calibrate)
      log calibrate
      "$build/attnbench" calibrate 2>&1 | tee "$out/calibrate.log"
      mkdir -p /tmp/attnbench-calibration && cp results/calibration/*.json /tmp/attnbench-calibration/
      ;;
    bench)
      log bench
      # Interleaved repetitions, so drift hits direct and plugin alike; the JSON keeps every repetition.
      "$build/tools/plugin_overhead_bench" --plugin-dir "$build/plugins" --benchmark_repetitions=20 \
        --benchmark_enable_random_interleaving=true --benchmark_min_time=0.1 --benchmark_report_aggregates_only=true \
        --benchmark_out=results/h200/plugin_overhead.json --benchmark_out_format=json 2>&1 | tee results/h200/plugin_overhead.txt
      python3 tools/plugin_overhead_summary.py results/h200/plugin_overhead.json | tee -a results/h200/plugin_overhead.txt
      ;;
    models)
      log models
      # The model presets (configs/models/): ragged prefill, paged decode, windows and softcap.
      mkdir -p results/h200/models
      for config in ${ATTNBENCH_MODELS:-configs/models/*.yaml}; do  # a call of its own may take the rest
        name=$(basename "$config" .yaml)
        # Resumed only where an earlier call of this commit left it (a committed report of another
        # commit, or of another schema, is measured again).
        resume=--force
        of_this_commit "results/h200/models/$name.csv" && resume=--resume
        "$build/attnbench" run "$config" $resume -o "results/h200/models/$name.csv" 2>"$out/$name.stderr" \
          | tee "results/h200/models/$name.summary.txt" | tail -12
        echo "exit code ${PIPESTATUS[0]}" | tee -a "results/h200/models/$name.summary.txt"
        [ -n "${OUT:-}" ] && tar czf "$OUT/run.tgz" results/h200 $(ls -d results/calibration 2>/dev/null) -C /tmp attnbench-logs
      done
      ;;
    published)
      log published  # cudnn-frontend's published configuration, burst then sustained, and their compare
      mkdir -p results/h200/published
      # The burst pass alone took 8 min on an H100: ATTNBENCH_POWERS=burst (or sustained) runs one
      # per call; compare runs once both reports are there.
      for power in ${ATTNBENCH_POWERS:-burst sustained}; do
        "$build/attnbench" run configs/cudnn-fe-published.yaml --force --power $power \
          -o "results/h200/published/$power.csv" 2>"$out/published-$power.stderr" \
          | tee "results/h200/published/$power.summary.txt" | tail -25
        echo "exit code ${PIPESTATUS[0]}" | tee -a "results/h200/published/$power.summary.txt"
        python3 tools/published_table.py "results/h200/published/$power.csv" | tee "results/h200/published/$power.table.md"
        [ -n "${OUT:-}" ] && tar czf "$OUT/run.tgz" results/h200 -C /tmp attnbench-logs
      done
      if of_this_commit results/h200/published/burst.csv && of_this_commit results/h200/published/sustained.csv; then
        "$build/attnbench" compare results/h200/published/burst.csv results/h200/published/sustained.csv \
          | tee results/h200/published/compare.txt | tail -20
        "$build/attnbench" compare --normalize-clock results/h200/published/burst.csv \
          results/h200/published/sustained.csv | tee results/h200/published/compare-normalized.txt | tail -20
      fi
      ;;
    models-prefill)
      log models-prefill  # the presets' ragged prefill points alone (-s1- is decode), forced, into <name>.prefill.csv
      mkdir -p results/h200/models
      for config in ${ATTNBENCH_MODELS:-configs/models/*.yaml}; do
        name=$(basename "$config" .yaml)
        points=$("$build/attnbench" run "$config" --dry-run 2>"$out/$name.dry-run.stderr" | grep -E '^  b.*-qlens-' | grep -v -- '-s1-')
        # A preset whose backends are not all built here (no .whl) refuses its dry run: say so.
        [ -z "$points" ] && { echo "$name: no prefill points:"; tail -3 "$out/$name.dry-run.stderr"; continue; }
        "$build/attnbench" run "$config" --force --points $points -o "results/h200/models/$name.prefill.csv" \
          2>"$out/$name.prefill.stderr" | tee "results/h200/models/$name.prefill.summary.txt" | tail -8
        echo "exit code ${PIPESTATUS[0]}" | tee -a "results/h200/models/$name.prefill.summary.txt"
      done
      ;;
    mla)
      # MLA: its tests (the CPU ones and the GPU ones), cudnn-frontend's published prefill shape
      # (burst), and the two presets (without flex, whose compiles take minutes a shape:
      # $ATTNBENCH_MLA_BACKENDS overrides; $ATTNBENCH_MLA_CONFIGS picks the configs).
      log mla
      mkdir -p "$res/mla"
      nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv | tee "$res/mla/card.txt"
      (cd "$build" && ./measure_tests --gtest_filter='Mla*:GpuMla*' 2>&1) | tee "$res/mla/tests.txt" \
        | grep -E "measured|skipped|OK|FAILED|PASSED|Failure" | head -60
      for cfg in ${ATTNBENCH_MLA_CONFIGS:-mla-published models/deepseek-v3 models/kimi-k2}; do
        name=$(basename "$cfg")
        pick=; [ "$name" != mla-published ] && pick="--backends ${ATTNBENCH_MLA_BACKENDS:-cudnn,efficient,cudnn-fe,fa3,flashinfer}"
        "$build/attnbench" run "configs/$cfg.yaml" --force $pick -o "$res/mla/$name.csv" 2>"$out/$name.stderr" \
          | tee "$res/mla/$name.summary.txt" | tail -40
        echo "exit code ${PIPESTATUS[0]}" | tee -a "$res/mla/$name.summary.txt"
        [ -n "${OUT:-}" ] && tar czf "$OUT/run.tgz" "$res" $(ls -d results/calibration 2>/dev/null) -C /tmp attnbench-logs
      done
      ;;
    run:*)
      # Any config: run:NAME runs configs/NAME.yaml into $res/NAME.csv (results/h100 or h200);
      # $ATTNBENCH_RUN_ARGS adds options (--plugin-dir, --backends).
      name=${step#run:}
      log "run $name"
      mkdir -p "$(dirname "$res/$name")" "$(dirname "$out/$name")"
      "$build/attnbench" run "configs/$name.yaml" --force ${ATTNBENCH_RUN_ARGS:-} -o "$res/$name.csv" 2>"$out/$name.stderr" \
        | tee "$res/$name.summary.txt" | tail -25
      echo "exit code ${PIPESTATUS[0]}" | tee -a "$res/$name.summary.txt"
      ;;
    gtest:*)
      # The GPU tests matching a gtest filter, with what they print: gtest:'GpuMla*:GpuSinks*'
      # (after build-run with ATTNBENCH_BUILD_TARGETS=measure_tests) into $res/gtest.txt.
      log "$step"
      (cd "$build" && ./measure_tests --gtest_filter="${step#gtest:}" 2>&1) | tee -a "$res/gtest.txt" \
        | grep -E "measured|skipped|OK|FAILED|PASSED|Failure|error" | head -80
      ;;
    seed-aa)
      log seed-aa
      # Two single runs of the seed sweep back to back (no repetitions), and what compare makes of
      # them: every verdict other than same or unsure is a false one.
      mkdir -p results/h200/compare-single-runs
      for run in a b; do
        "$build/attnbench" run configs/seed.yaml --force --no-summary -o "results/h200/compare-single-runs/$run.csv" \
          2>"$out/seed-aa-$run.stderr"
      done
      "$build/attnbench" compare results/h200/compare-single-runs/a.csv results/h200/compare-single-runs/b.csv \
        >results/h200/compare-single-runs/a-b.txt 2>&1
      echo "compare exit code $?"
      grep -E "^backend|^[a-z]+ +[0-9.]+ +\[|row\(s\)" results/h200/compare-single-runs/a-b.txt
      grep -cE " (better|worse) " results/h200/compare-single-runs/a-b.txt
      ;;
    memory-check)
      log memory-check
      # What stays reserved after each (point, backend): all timing modes, then without graph,
      # then graph alone, so a leak is pinned to the mode that makes it.
      mkdir -p results/h200/memory-check
      for modes in cold,batch,graph cold,batch graph; do
        "$build/attnbench" run configs/memory-check.yaml --force --timing-modes "$modes" --no-summary \
          -o "results/h200/memory-check/${modes//,/-}.csv" 2>"$out/memory-${modes//,/-}.stderr"
        echo "timing modes $modes: exit code $?"
        python3 -c "import csv,sys; [print(' ', r['point_id'], r['backend'], r['timing_mode'], r['status'], r['peak_reserved_mib'], r['reserved_left_mib'], r['flags']) for r in csv.DictReader(open(sys.argv[1]))]" \
          "results/h200/memory-check/${modes//,/-}.csv"
      done
      ;;
    probes)
      log probes
      # Backends that fool a naive harness (a cached output, work on a side stream, a cache keyed on
      # the inputs' values, a partial output, a leak, no work inside a graph capture) beside honest ones.
      mkdir -p /tmp/attnbench-probes && cp "$build"/plugins/*.so "$build"/tests/faulty_plugins/*.so /tmp/attnbench-probes/
      "$build/attnbench" run configs/probes.yaml --force --plugin-dir /tmp/attnbench-probes \
        -o results/h200/probes.csv 2>"$out/probes.stderr" | tee results/h200/probes.summary.txt | tail -30
      echo "exit code ${PIPESTATUS[0]} (1 expected: the probes' rows are wrong)"
      ;;
    faults)
      log faults
      # The six backends and the fault plugins in one folder; each fault fires at seq_len 1024.
      mkdir -p /tmp/attnbench-faults && cp "$build"/plugins/*.so "$build"/tests/fault_plugins/*.so /tmp/attnbench-faults/
      ATTNBENCH_FAULT_SEQ_LEN=1024 "$build/attnbench" run configs/faults.yaml --force --plugin-dir /tmp/attnbench-faults \
        -o results/h200/faults.csv 2>"$out/faults.stderr" | tee "$out/faults.summary" | tail -30
      echo "exit code ${PIPESTATUS[0]} (1 expected: the fault rows)"
      ;;
    isolation)
      log isolation
      # What isolation costs: seed with workers and in one process, interleaved.
      tools/isolation_bench.sh configs/seed.yaml 3 "$build" | tee results/h200/isolation.txt
      ;;
    ncu)
      log ncu
      ncu --version | tail -1
      python3 tools/ncu_check.py --attnbench "$build/attnbench" --out results/h200 2>&1 | tee "$out/ncu.log" | tail -40
      ;;
    *) echo "unknown step $step"; exit 2 ;;
  esac
  # After every step, so a call cut short by its time limit still brings back what it finished.
  [ -n "${OUT:-}" ] && tar czf "$OUT/run.tgz" results/h200 "$res" $(ls -d results/calibration 2>/dev/null) -C /tmp attnbench-logs
done
log done
