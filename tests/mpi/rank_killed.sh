#!/usr/bin/env bash
# One rank SIGKILLed mid-run (inside the timed allreduces or a training step): every other rank
# is gone within BOUND_S seconds, no final trace is left, and the .partial it leaves is refused
# by trace_check and by scaleprobe-analyze, also under a final name (its content is incomplete).
#   rank_killed.sh <np> <trace_check> <scaleprobe-analyze> <program> [args...]
# The program gets "-o <tmp>/run.h5" appended. Rank VICTIM (default 1) is killed once the
# .partial exists and, for the trainers (progress lines on stdout), once step 3 has been
# reported, so the peers are inside the step loop with the engine's communication thread
# reducing buckets. BOUND_S (default 30) is the bound; MPIRUN_FLAGS adds mpirun flags.
# The bound holds because the launcher ends the job when a rank dies (mpirun by default, srun
# through --kill-on-bad-exit=1 in python/scaleprobe_sweep/launch.py). The binaries do not notice a dead peer
# themselves: with MPIRUN_FLAGS=--enable-recovery the survivors are still in MPI after 20 s
# (docs/slurm.md, "Faults"). Measured here: 1.1 s (allreduce_perf, bucket_sweep) and 2.1 s
# (the trainers catch SIGTERM as a graceful stop, so mpirun's SIGKILL ends them a second later).
set -u
np=$1 check=$2 analyze=$3; shift 3
BOUND_S=${BOUND_S:-30} VICTIM=${VICTIM:-1}
name=$(basename "$1")
tmp=$(mktemp -d)
mpirun_pid=
cleanup() { [ -n "$mpirun_pid" ] && kill -KILL "$mpirun_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
checks=0 failures=0
fail() { echo "FAIL: $name np$np: $*"; failures=$((failures + 1)); }

# Every descendant of a pid (Open MPI 4's mpirun forks the ranks itself).
descendants() {
  local c
  for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do echo "$c"; descendants "$c"; done
}
# The pid of MPI rank $2 below mpirun pid $1 (from the rank's environment: Open MPI sets
# OMPI_COMM_WORLD_RANK, MPICH's Hydra PMI_RANK), empty if not found.
rank_pid() {
  local p
  for p in $(descendants "$1"); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qxE "(OMPI_COMM_WORLD_RANK|PMI_RANK)=$2" && { echo "$p"; return; }
  done
}

"${SP_MPIEXEC:-mpirun}" ${MPIRUN_FLAGS:-} -np "$np" "$@" -o "$tmp/run.h5" >"$tmp/out" 2>"$tmp/err" &
mpirun_pid=$!
ready=0
for _ in $(seq 1 300); do
  if [ -e "$tmp/run.h5.partial" ]; then
    case $name in
      *_train) grep -qE '^step +([3-9]|[1-9][0-9]+)/' "$tmp/out" && ready=1 ;;
      *) ready=1 ;;
    esac
  fi
  [ $ready = 1 ] && break
  kill -0 "$mpirun_pid" 2>/dev/null || break
  sleep 0.1
done
checks=$((checks + 1))
if [ $ready = 0 ]; then
  fail "no run.h5.partial (and for a trainer no step 3) within 30 s, or the run ended:"; tail -n 5 "$tmp/out" "$tmp/err"
  echo "rank_killed $name np$np: 0 passed, 1 failed"; exit 1
fi
sleep 0.3
victim=$(rank_pid "$mpirun_pid" "$VICTIM")
ranks=$(descendants "$mpirun_pid" | while read -r p; do
  tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qE '^(OMPI_COMM_WORLD_RANK|PMI_RANK)=' && echo "$p"; done)
[ -n "$victim" ] || { fail "no process with rank $VICTIM below mpirun $mpirun_pid"; exit 1; }
[ "$(echo "$ranks" | grep -c .)" = "$np" ] || fail "found $(echo "$ranks" | grep -c .) rank processes, expected $np"

t0=$(date +%s.%N)
kill -KILL "$victim"
gone=0
while :; do
  alive=0
  for p in $ranks $mpirun_pid; do kill -0 "$p" 2>/dev/null && [ "$(cut -d' ' -f3 /proc/"$p"/stat 2>/dev/null)" != Z ] && alive=1; done
  [ $alive = 0 ] && { gone=1; break; }
  [ "$(echo "$(date +%s.%N) - $t0 > $BOUND_S" | bc)" = 1 ] && break
  sleep 0.05
done
took=$(echo "$(date +%s.%N) - $t0" | bc)
if [ $gone = 0 ]; then
  fail "ranks still running ${BOUND_S} s after rank $VICTIM was killed:"; ps -o pid,stat,etime,args -p "$(echo $ranks | tr ' ' ,)"
  for p in $ranks $mpirun_pid; do kill -KILL "$p" 2>/dev/null; done
fi
wait "$mpirun_pid"; rc=$?
mpirun_pid=
if [ $gone = 1 ]; then
  printf '%s np%s: every rank gone %.2f s after rank %s was killed (bound %s s), mpirun exit %s\n' "$name" "$np" "$took" "$VICTIM" "$BOUND_S" "$rc"
fi
checks=$((checks + 1)); [ "$rc" != 0 ] || fail "mpirun exited 0 after a rank was killed"

checks=$((checks + 1)); [ -e "$tmp/run.h5" ] && fail "a final trace $tmp/run.h5 was left"
checks=$((checks + 1))
if [ ! -e "$tmp/run.h5.partial" ]; then fail "the .partial file is gone"
else
  if "$check" "$tmp/run.h5.partial" >/dev/null 2>"$tmp/cerr" || ! grep -q "incomplete trace" "$tmp/cerr"; then
    fail "trace_check did not refuse the .partial as incomplete: $(cat "$tmp/cerr")"
  fi
  checks=$((checks + 1))
  if "$analyze" check "$tmp/run.h5.partial" >/dev/null 2>"$tmp/aerr" || ! grep -q "incomplete trace" "$tmp/aerr"; then
    fail "scaleprobe-analyze check did not refuse the .partial: $(cat "$tmp/aerr")"
  fi
  # Its content is not a finished trace either: under a final name it is still refused.
  checks=$((checks + 1))
  cp "$tmp/run.h5.partial" "$tmp/renamed.h5"
  if "$check" "$tmp/renamed.h5" >/dev/null 2>"$tmp/cerr"; then fail "trace_check accepted the .partial's content renamed to .h5"; fi
  checks=$((checks + 1))
  if "$analyze" check "$tmp/renamed.h5" >/dev/null 2>"$tmp/aerr"; then fail "scaleprobe-analyze accepted the .partial's content renamed to .h5"; fi
fi
echo "rank_killed $name np$np: $((checks - failures)) passed, $failures failed"
[ $failures = 0 ]
