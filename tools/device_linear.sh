#!/usr/bin/env bash
# Issue 55's GPU evidence, the linear-attention kinds (gdn, kda; docs/linear-attention.md): the
# presets with GDN and KDA layers, each run within $ATTNBENCH_LINEAR_STEP_S seconds (120; its rows
# so far are kept), into $res/linear/ (results/h100 or h200), packed into $OUT/linear.tgz after
# each step. Needs a build (tools/device_dsa.sh build makes one in $ATTNBENCH_BUILD) and, carried in
# .whl/, the wheels fla_core-0.6.0 and einops (FLA's one import beyond torch and triton).
# Steps by name: `linear` (configs/linear-attention.yaml, FLA's backends), `linear-reference` (the
# same config's decodes and short prefill, the PyTorch reference), or a preset under configs/models/.
set -uo pipefail
build=${ATTNBENCH_BUILD:-/tmp/attnbench-build}
res=results/$(nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && echo h100 || echo h200)
sha=${ATTNBENCH_GIT_SHA:-unknown}
export PATH=/opt/torch/.venv/bin:$PATH
mkdir -p "$res/linear" /tmp/attnbench-logs
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site-linear .whl/fla_core-*.whl .whl/einops-*.whl \
  && export PYTHONPATH=/tmp/site-linear${PYTHONPATH:+:$PYTHONPATH}
python3 -c 'import fla, triton, torch; print("fla", fla.__version__, "triton", triton.__version__, "torch", torch.__version__)'
[ -x "$build/attnbench" ] || { echo "no build in $build: run tools/device_dsa.sh build"; exit 1; }
pack() { [ -n "${OUT:-}" ] && tar czf "$OUT/linear.tgz" "$res/linear" -C /tmp attnbench-logs; }
for step in ${*:-linear linear-reference qwen3.5-397b-a17b kimi-linear-48b}; do
  echo "== $(date +%T) $step"
  select=()
  case $step in
    linear) cfg=configs/linear-attention.yaml; select=(--backends fla fla-inplace fla-kda) ;;
    linear-reference)  # the PyTorch reference where a call is short: decodes, the 1k/3k prefill
      cfg=configs/linear-attention.yaml
      points=$("$build/attnbench" run "$cfg" --dry-run 2>/dev/null | grep -E '^  (gdn|kda)-' | grep -E -- '-s[12]-|-qlens-1024-3072-')
      # batch timing: the reference reads cu_seqlens_q on the host (a sync inside the call).
      select=(--backends torch-recurrent torch-recurrent-kda --timing-modes batch --points $points) ;;
    linear-prefill)  # FLA's prefills alone
      cfg=configs/linear-attention.yaml
      points=$("$build/attnbench" run "$cfg" --dry-run 2>/dev/null | grep -E '^  (gdn|kda)-' | grep -E -- '-qlens-|-s16384-')
      select=(--backends fla fla-inplace fla-kda --points $points) ;;
    *)  # a preset: its backends in $ATTNBENCH_LINEAR_BACKENDS (space-separated) if set, and its
        # points up to $ATTNBENCH_LINEAR_MAX_TOKENS tokens a sequence if set (a short call)
      cfg=configs/models/$step.yaml
      [ -n "${ATTNBENCH_LINEAR_BACKENDS:-}" ] && select+=(--backends $ATTNBENCH_LINEAR_BACKENDS)
      if [ -n "${ATTNBENCH_LINEAR_MAX_TOKENS:-}" ]; then
        # The dry run with the same backends: a preset naming a backend this build lacks (fa3
        # without its wheel) is refused whole otherwise, and no point would be left to name.
        points=$("$build/attnbench" run "$cfg" --dry-run "${select[@]}" 2>/tmp/attnbench-logs/$step.dry \
                 | sed -n 's/^  \([a-z].*-s\([0-9]*\)-.*\)$/\2 \1/p' \
                 | awk -v most="$ATTNBENCH_LINEAR_MAX_TOKENS" '$1 <= most {print $2}')
        [ -n "$points" ] || { echo "no point of $cfg up to $ATTNBENCH_LINEAR_MAX_TOKENS tokens:"; tail -3 /tmp/attnbench-logs/$step.dry; continue; }
        select+=(--points $points)
      fi ;;
  esac
  [ -f "$cfg" ] || { echo "no $cfg"; continue; }
  timeout "${ATTNBENCH_LINEAR_STEP_S:-120}" "$build/attnbench" run "$cfg" --force --no-summary \
    "${select[@]}" ${ATTNBENCH_LINEAR_PASSES:-} -o "$res/linear/$step.csv" 2>"/tmp/attnbench-logs/$step.stderr"
  echo "exit code $?"
  grep -E "\[(error|wrong|oom|timeout|crashed)\]" "/tmp/attnbench-logs/$step.stderr" | head -8
  "$build/attnbench" summary "$res/linear/$step.csv" 2>&1 | tail -30
  pack
done
