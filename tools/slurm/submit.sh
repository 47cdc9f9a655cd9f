#!/usr/bin/env bash
# Runs a sweep as a Slurm job array, one shard per task, then merges the shards:
#   tools/slurm/submit.sh [--wait] [--gpus-per-task G] [--partition P] CONFIG OUTDIR N [run options]
# Prints the two job ids. --wait returns when the merge is done, with its exit code.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
wait=() gpus=() partition=()
while [[ ${1:-} == --* ]]; do
  case $1 in
    --wait) wait=(--wait); shift ;;
    --gpus-per-task) gpus=("--gpus-per-task=$2"); shift 2 ;;
    --partition) partition=("--partition=$2"); shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
[ $# -ge 3 ] || { echo "usage: $0 [--wait] [--gpus-per-task G] [--partition P] CONFIG OUTDIR N [run options]" >&2; exit 2; }
config=$1 outdir=$2 n=$3
shift 3
mkdir -p "$outdir"
array=$(sbatch --parsable --array=0-$((n - 1)) --chdir="$PWD" --output="$outdir/shard-%a.log" \
  "${gpus[@]}" "${partition[@]}" "$here/attnbench-shard.sbatch" "$config" "$outdir" "$@")
echo "shards: job $array"
# afterany: a shard that ended with failed rows (exit 1) still has rows to merge.
set +e
merge=$(sbatch --parsable "${wait[@]}" --dependency="afterany:$array" --chdir="$PWD" \
  --output="$outdir/merge.log" "${partition[@]}" \
  "$here/attnbench-merge.sbatch" "$config" "$outdir" "$n")
status=$?
echo "merge: job $merge (log: $outdir/merge.log; the report: $outdir/merged.csv)"
exit $status
