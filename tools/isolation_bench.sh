#!/usr/bin/env bash
# What isolation costs: the same sweep run with workers (the default) and in one process
# (--isolation none), interleaved, REPS times each; prints the median wall times, their ratio and
# the worker start-up that attnbench reports. A benchmark, not a test: run it on a quiet machine.
#   tools/isolation_bench.sh [CONFIG] [REPS] [BUILD]     (defaults: configs/tiny.yaml 5 build)
set -euo pipefail
config=${1:-configs/tiny.yaml}
reps=${2:-5}
build=${3:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
for ((i = 0; i < reps; i++)); do
  for mode in worker none; do
    t0=$(now)
    "$build/attnbench" run "$config" --isolation "$mode" --force --no-summary -o "$tmp/$mode.csv" 2>"$tmp/$mode.log" || true
    t1=$(now)
    awk -v m="$mode" -v a="$t0" -v b="$t1" 'BEGIN {printf "%s %.3f\n", m, b - a}' >>"$tmp/times"
    grep -o "worker ready in [0-9.]*" "$tmp/$mode.log" | awk '{print "start", $4}' >>"$tmp/times" || true
  done
done
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
w=$(awk '$1 == "worker" {print $2}' "$tmp/times" | median)
n=$(awk '$1 == "none" {print $2}' "$tmp/times" | median)
s=$(awk '$1 == "start" {print $2}' "$tmp/times" | median)
echo "config: $config, $reps runs each, interleaved; $(nproc) cores; $(date -u +%FT%TZ)"
echo "isolation worker: median $w s per run"
echo "isolation none:   median $n s per run"
echo "worker start-up (spawn to hello: LibTorch, CUDA, plugins): median $s s"
awk -v w="$w" -v n="$n" 'BEGIN {printf "ratio worker / none: %.3f\n", w / n}'
