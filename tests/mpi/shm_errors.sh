#!/usr/bin/env bash
# The node-local allreduces' one-line refusals, through allreduce_perf:
#   errors:  ranks on two nodes (node keys) -> "runs within one node" (hier runs there; on nodes of
#            unequal size it refuses); a node key that is not a
#            number -> usage error; a segment left in /dev/shm by a dead creator is removed.
#   small:   /dev/shm too small for the segment -> one line naming the bytes needed (a private
#            mount namespace with a 64 MiB /dev/shm: optional part root where this host cannot make one).
# Usage: shm_errors.sh errors|small <allreduce_perf> <mpiexec> [mpiexec flags...]
set -u
mode=$1 P=$2 MPIEXEC=$3; shift 3
# shellcheck source=../lib/expect_error.sh
source "$(dirname "$0")/../lib/expect_error.sh"
# shellcheck source=../lib/optional_part.sh
source "$(dirname "$0")/../lib/optional_part.sh"
cd "$tmp" || exit 1
# <exit code> <text of the one "allreduce_perf: error:" line> <command...>
expect_line() {
  local want=$1 pattern=$2; shift 2
  checks=$((checks + 1))
  timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -ne "$want" ] || [ "$(grep -c "allreduce_perf: error:" "$tmp/err")" -ne 1 ] ||
     ! grep "allreduce_perf: error:" "$tmp/err" | grep -qF -- "$pattern"; then
    echo "FAIL: '$*' rc=$rc (want $want), wanted one error line with '$pattern':"; sed 's/^/    /' "$tmp/err"
    failures=$((failures + 1))
  fi
}
# Each rank's node key is its rank (Open MPI or MPICH's rank variable): every rank its own node.
keyed='SCALEPROBE_NODE_KEY=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}} exec "$0" "$@"'
run=(-a shm --sizes 1K --no-membw --iters 2 --warmup 0)
case $mode in
errors)
  expect_line 2 "the shm allreduce runs within one node: these ranks span 2 nodes" \
    "$MPIEXEC" "$@" -np 2 bash -c "$keyed" "$P" "${run[@]}"
  expect_line 2 "SCALEPROBE_NODE_KEY='a' is not a node number" env SCALEPROBE_NODE_KEY=a "$MPIEXEC" "$@" -np 2 "$P" "${run[@]}"
  # hier spans nodes (each rank its own: it runs, verified), of the same size only.
  checks=$((checks + 1))
  "$MPIEXEC" "$@" -np 2 bash -c "$keyed" "$P" -a hier,ring --sizes 1K,300K --no-membw --iters 2 --warmup 0 >"$tmp/out" 2>&1 ||
    { echo "FAIL: hier on 2 nodes of one rank did not run:"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1)); }
  halves='SCALEPROBE_NODE_KEY=$(( ${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}} % 2 )) exec "$0" "$@"'
  expect_line 2 "the hierarchical allreduce needs the same number of ranks on every node: these ranks span 2 nodes of 1 to 2 ranks" \
    "$MPIEXEC" "$@" -np 3 bash -c "$halves" "$P" -a hier --sizes 1K --no-membw --iters 2 --warmup 0
  # There -a all runs, leaving out every node-local algorithm with a note.
  checks=$((checks + 1))
  "$MPIEXEC" "$@" -np 3 bash -c "$halves" "$P" -a all --sizes 1K --no-membw --iters 2 --warmup 0 >"$tmp/out" 2>&1 &&
    grep -q "leaves out shm, shm-seg" "$tmp/out" && grep -q "unequal size leaves out hier" "$tmp/out" ||
    { echo "FAIL: -a all on nodes of unequal size:"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1)); }
  # The same key everywhere is one node: it runs.
  checks=$((checks + 1))
  SCALEPROBE_NODE_KEY=7 "$MPIEXEC" "$@" -np 2 "$P" "${run[@]}" >"$tmp/out" 2>&1 ||
    { echo "FAIL: one node key for both ranks did not run:"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1)); }
  # A segment whose creator died before unlinking it is removed by the next job on the host.
  host=$(hostname | tr '/-' '__')
  bash -c 'exit 0' & dead=$!; wait $dead
  orphan=/dev/shm/scaleprobe-shm-$host-$dead-0
  : >"$orphan"
  checks=$((checks + 1))
  "$MPIEXEC" "$@" -np 1 "$P" "${run[@]}" >"$tmp/out" 2>&1 && [ ! -e "$orphan" ] ||
    { echo "FAIL: the orphaned segment $orphan is still there (or the run failed)"; rm -f "$orphan"; failures=$((failures + 1)); }
  ;;
small)
  # A private mount namespace whose /dev/shm holds 64 MiB: room for the MPI library's own shared
  # memory, none for 2 ranks x (staging + an arena of three 64 MiB buffers).
  unshare -m bash -c 'mount -t tmpfs -o size=64m tmpfs /dev/shm' 2>/dev/null ||
    sp_skip_optional_part root "cannot mount a small /dev/shm in a private mount namespace (needs root and unshare)"
  expect_line 1 "/dev/shm is too small for the shm allreduce's segment: it needs" \
    unshare -m bash -c 'mount -t tmpfs -o size=64m tmpfs /dev/shm && exec "$0" "$@"' \
    "$MPIEXEC" "$@" -np 2 "$P" -a shm-seg --sizes 64M --no-membw --iters 2 --warmup 0
  ;;
esac
finish "shm_errors $mode"
