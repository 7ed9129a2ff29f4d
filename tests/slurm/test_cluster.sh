# shellcheck shell=bash
# Sourced by the SLURM tests: a private local cluster for one test, always torn down.
#   start_test_cluster NAME NNODES CPUS_PER_NODE
# sets W (work folder /tmp/NAME.XXXXXX) and C (its cluster folder), clears any SLURM_*/SBATCH_*/
# SRUN_*/SALLOC_*/SCALEPROBE_* variable of an enclosing job or the caller (hermetic), installs an
# EXIT trap that stops the daemons by PID (and a watchdog that does so if the test is SIGKILLed),
# brings the cluster up and sources its env.sh. The caller defines log and fail (one line each).
# The work folder is removed on success unless KEEP=1.
start_test_cluster() {
  local name=$1 nnodes=$2 cpus=$3 here
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  SLURM_TEST_DOWN=$here/slurm-local-down.sh
  for v in $(compgen -e | grep -E '^(SLURM_|SBATCH_|SRUN_|SALLOC_|SCALEPROBE_)' || true); do unset "$v"; done
  W=$(mktemp -d "/tmp/$name.XXXXXX") && chmod 755 "$W"   # munged: o+x above its socket
  C=$W/cluster
  trap stop_test_cluster EXIT
  trap 'fail "interrupted"' INT TERM
  log "work folder $W"
  # Watchdog: if the test dies without its EXIT trap (SIGKILL), stop the cluster anyway.
  setsid bash -c 'while kill -0 '"$$"' 2>/dev/null && [ ! -e "$1/stopped" ]; do sleep 2; done
    [ -e "$1/stopped" ] || timeout 90 bash "$2" "$3"' watchdog "$W" "$SLURM_TEST_DOWN" "$C" \
    </dev/null >"$W/watchdog.log" 2>&1 &
  SLURM_TEST_WATCHDOG=$!
  NNODES=$nnodes CPUS_PER_NODE=$cpus bash "$here/slurm-local-up.sh" "$C" ||
    fail "the local cluster did not come up (daemon logs above)"
  # shellcheck disable=SC1091
  source "$C/env.sh"
  log "cluster up ($nnodes nodes x $cpus CPUs)"
}

stop_test_cluster() {
  local rc=$?
  trap - EXIT INT TERM
  touch "$W/stopped"
  if [ -d "$C" ]; then
    log "stopping the cluster"
    timeout 90 bash "$SLURM_TEST_DOWN" "$C" || echo "slurm-local-down failed"
  fi
  [ -n "${SLURM_TEST_WATCHDOG:-}" ] && kill "$SLURM_TEST_WATCHDOG" 2>/dev/null
  if [ "$rc" = 0 ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "$W"; else echo "work folder kept: $W"; fi
  log "done (exit $rc)"
  exit "$rc"
}
