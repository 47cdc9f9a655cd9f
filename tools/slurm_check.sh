#!/usr/bin/env bash
# The Slurm job-array path for real, on this machine: a one-node Slurm from Debian's packages
# (munged, slurmctld and slurmd on localhost, its own config and state in a temporary folder), a
# two-task array of a tiny CPU sweep through tools/slurm/submit.sh, the merge step, and a check
# that the merged report holds every measurement of the sweep once. Needs root (or sudo) to
# install the packages and start the daemons; says so and skips otherwise.
#   tools/slurm_check.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
say() { echo "[slurm-check] $*" >&2; }
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if sudo -n true 2>/dev/null; then sudo=sudo; else say "skipped: needs root or sudo to run slurmctld"; exit 0; fi
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  # Packages and daemons for the whole machine: only when asked (CI does: .ci/run).
  if [ "${ATTNBENCH_SLURM_INSTALL:-0}" != 1 ]; then
    say "skipped: slurm-wlm and munge are not installed (ATTNBENCH_SLURM_INSTALL=1 installs them from Debian's packages)"
    exit 0
  fi
  say "installing slurm-wlm and munge"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq slurm-wlm munge >/dev/null
fi
[ -f /etc/munge/munge.key ] || $sudo mungekey --create
started_munged=0
if ! pgrep -x munged >/dev/null; then
  $sudo mkdir -p /run/munge && $sudo chown munge:munge /run/munge 2>/dev/null || true
  $sudo munged --force
  started_munged=1
fi

work=$(mktemp -d /tmp/attnbench-slurm.XXXXXX)
chmod 755 "$work"
node=$(hostname -s)
cat >"$work/slurm.conf" <<CONF
ClusterName=attnbench-check
SlurmctldHost=$node
NodeName=$node CPUs=$(nproc) State=UNKNOWN
PartitionName=check Nodes=$node Default=YES MaxTime=INFINITE State=UP
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
CONF
mkdir -p "$work/state" "$work/spool"
export SLURM_CONF=$work/slurm.conf
# The daemons go with the check (and their port with them), whatever way it ends.
stop() {
  for daemon in slurmd slurmctld; do
    [ -f "$work/$daemon.pid" ] || continue
    pid=$(cat "$work/$daemon.pid")
    $sudo kill "$pid" 2>/dev/null || continue
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  done
  # The munged this check started goes too: no daemon is left running.
  if [ "$started_munged" = 1 ]; then $sudo pkill -x munged 2>/dev/null; fi
  return 0
}
trap stop EXIT
$sudo env SLURM_CONF="$SLURM_CONF" slurmctld -f "$SLURM_CONF"
$sudo env SLURM_CONF="$SLURM_CONF" slurmd -f "$SLURM_CONF"
for _ in $(seq 60); do
  sinfo -h -o %T 2>/dev/null | grep -q idle && break
  sleep 1
done
sinfo -h -o "%P %D %T" | grep -q idle || { say "the node never became idle"; tail -20 "$work"/slurm*.log; exit 1; }
say "one-node Slurm up ($(sinfo --version)); submitting a two-task array"

out=$work/out
export ATTNBENCH=$build/attnbench
status=0
tools/slurm/submit.sh --wait configs/tiny.yaml "$out" 2 --backends naive,inplace,math || status=$?
cat "$out/merge.log"
[ "$status" -eq 0 ] || { say "the merge step ended with $status"; tail -5 "$out"/shard-*.log; exit 1; }
for k in 1 2; do [ -s "$out/shard-$k-of-2.csv" ] || { say "shard $k/2 wrote no report"; exit 1; }; done
# tiny.yaml: 2 points x 3 backends, one row each on the CPU; every one once, each from its shard.
python3 - "$out/merged.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
keys = [(r["point_id"], r["backend"], r["timing_mode"]) for r in rows]
assert len(keys) == 6 and len(set(keys)) == 6, keys
assert {r["shard"] for r in rows} == {"1/2", "2/2"}, {r["shard"] for r in rows}
assert all(r["status"] == "ok" for r in rows), [(r["backend"], r["reason"]) for r in rows]
print(f"[slurm-check] merged.csv: {len(rows)} rows from shards 1/2 and 2/2, every one once")
PY
say "ok"
