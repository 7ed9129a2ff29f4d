#!/usr/bin/env bash
# Stop the private cluster that tests/slurm/slurm-local-up.sh BASE_DIR started: cancel its jobs,
# then TERM the slurmd, slurmctld and munged processes named in BASE_DIR's pid files (each
# checked against /proc/PID/comm, so a recycled PID is never signalled), waiting a bounded time
# for each group. Never pkill/killall. Safe to run twice, or after a failed start.
#   tests/slurm/slurm-local-down.sh BASE_DIR
set -uo pipefail
B=${1:-${SLURM_LOCAL_BASE:-}}
[ -n "$B" ] && [ -d "$B" ] || { echo "usage: $0 BASE_DIR" >&2; exit 2; }
B=$(cd "$B" && pwd)
export PATH=$PATH:/usr/sbin:/sbin
CLUSTER="" SHM=""
# shellcheck disable=SC1091
[ -f "$B/cluster.env" ] && source "$B/cluster.env"

alive() { grep -qs '^State:[[:space:]]*[^Z]' "/proc/$1/status"; }   # a zombie counts as gone
# term PIDFILE COMM: TERM the pid if it is still that program; print the pid
term() {
  [ -f "$1" ] || return 0
  local p; p=$(cat "$1" 2>/dev/null)
  [[ $p =~ ^[0-9]+$ ]] || return 0
  if [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] && alive "$p"; then kill -TERM "$p" 2>/dev/null && echo "$p"; fi
}
# waitgone SECONDS PIDS...: wait until none is alive; then KILL the stragglers
waitgone() {
  local t=$1; shift
  [ $# -gt 0 ] || return 0
  local end=$((SECONDS + t)) p any
  while [ $SECONDS -lt $end ]; do
    any=0; for p in "$@"; do alive "$p" && any=1; done
    [ $any = 0 ] && return 0
    sleep 0.1
  done
  for p in "$@"; do alive "$p" && { echo "slurm-local-down: $p did not stop in ${t}s: KILL" >&2; kill -KILL "$p" 2>/dev/null; }; done
  return 0
}

# 1. Cancel the jobs of this cluster (steps outlive slurmd otherwise) and wait for them to go.
if [ -f "$B/etc/slurm.conf" ] && [ -f "$B/run/slurmctld.pid" ] && alive "$(cat "$B/run/slurmctld.pid")"; then
  export SLURM_CONF=$B/etc/slurm.conf
  if [ -n "$(timeout 10 squeue -h -o %i 2>/dev/null)" ]; then
    timeout 10 scancel --full -u "$(id -un)" 2>/dev/null
    end=$((SECONDS + 20))
    while [ $SECONDS -lt $end ] && [ -n "$(timeout 10 squeue -h -o %i 2>/dev/null)" ]; do sleep 0.5; done
  fi
fi

# 2. Daemons: every slurmd together, then slurmctld, then munged.
pids=$(for f in "$B"/run/slurmd-*.pid; do term "$f" slurmd; done)
# shellcheck disable=SC2086
waitgone 20 $pids
# shellcheck disable=SC2046
waitgone 20 $(term "$B/run/slurmctld.pid" slurmctld)
# shellcheck disable=SC2046
waitgone 10 $(term "$B/munge/munged.pid" munged)
rm -f "$B"/run/*.pid "$B/munge/munged.pid"
[ -n "$SHM" ] && [[ $SHM == /dev/shm/spslurm-* ]] && rm -rf "$SHM"
echo "slurm-local-down: stopped ${CLUSTER:-cluster} under $B"
exit 0
