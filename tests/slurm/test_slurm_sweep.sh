#!/usr/bin/env bash
# The SLURM test (CTest slurm_sweep, label slurm): a private local cluster (4 virtual nodes x 8
# declared CPUs on this machine), then a small real sweep of jobs/allreduce.sbatch and
# jobs/bucket_sweep.sbatch submitted through jobs/submit-sweep, checked end to end.
#
#   tests/slurm/test_slurm_sweep.sh [BUILD_DIR]        (default build/release; needs root)
#
#  1. dry runs: the exact sbatch lines (grid, --time, launcher, weak scaling, array, GPU), nothing
#     submitted and nothing written; bad requests refused;
#  2. the sweep: allreduce on 1 node x {1,2,4} tasks and on {2,3} nodes x {1,2} tasks, bucket_sweep
#     on 1 node x {1,2,4} and {2,3} nodes x 2 tasks (job arrays) with srun --mpi=pmix, allreduce on
#     2 nodes x 2 tasks with mpirun inside the allocation, gpt_train (weak) on 1 and 3 nodes (its
#     checkpoints/ folder beside the traces), one weak-scaling point of each (allreduce with 2 CPUs per task, from a
#     campaign file, 2 passes), and the report job (--analysis, afterany on all of them); every
#     trace passes trace_check and matches its point and pass (tests/slurm/check_campaign.py:
#     ranks, virtual nodes, threads, job ids, SCALEPROBE_* provenance, weak sizes scaled by the
#     binaries);
#  3. resume: the same submissions again submit nothing; after deleting one trace and planting a
#     stale partial trace, they rerun exactly that point, rename the partial, and the report runs.
# Every point is expected to pass first time. A point that fails is resubmitted once (resume),
# loudly, so a rare launcher fault shows in the log without hiding a systematic one; a second
# failure, or more than 2 failed points, fails the test.
# Every wait is bounded; the daemons are stopped by PID on exit, whatever happens (and by a
# watchdog if this script is killed). KEEP=1 keeps the work folder.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/slurm
BUILD=$(realpath -m "${1:-$ROOT/build/release}")
T0=$SECONDS
JOB_TIME=${SLURMTEST_JOB_TIME:-3}           # sbatch --time of every job (minutes)
ROUND_S=${SLURMTEST_ROUND_S:-330}           # the longest wait for one round of jobs
BUDGET_END=$((T0 + ${SLURMTEST_BUDGET_S:-780}))  # all waits end by then (CTest TIMEOUT is 900)
INJECT=${SLURMTEST_INJECT_FAULT:-0}         # 1: the mpirun point fails once (checks the retry path)

log()  { echo "[slurm-test +$((SECONDS - T0))s] $*"; }
fail() { echo "[slurm-test +$((SECONDS - T0))s] FAIL: $*"; exit 1; }

# ---------------------------------------------------------------- prerequisites
export PATH=$PATH:/usr/sbin:/sbin
missing=()
for c in munged mungekey slurmctld slurmd sbatch srun squeue scancel sinfo scontrol mpirun; do
  command -v "$c" >/dev/null || missing+=("$c")
done
[ ${#missing[@]} = 0 ] || fail "missing ${missing[*]}: install slurm-wlm, munge and openmpi-bin (scripts/install-deps.sh does)"
[ "$(id -u)" = 0 ] || fail "the local cluster's daemons run as root: run this test as root"
/usr/bin/python3 -c 'import h5py' 2>/dev/null || fail "/usr/bin/python3 has no h5py (python3-h5py; scripts/install-deps.sh)"
for b in collectives/allreduce_perf collectives/bucket_sweep core/trace_check; do
  [ -x "$BUILD/$b" ] || fail "no $BUILD/$b: build first (cmake --build --preset release)"
done
# shellcheck source=test_cluster.sh
source "$HERE/test_cluster.sh"
start_test_cluster scaleprobe-slurm-test 4 8
log "build $BUILD"
timeout 20 srun --mpi=list 2>&1 | grep -q pmix ||
  fail "srun --mpi=list has no pmix: install libpmix-dev (scripts/install-deps.sh)"

# The site file of this "site": virtual nodes share the host's cores, so mpirun must not bind.
cat >"$W/site.env" <<'EOF'
# local test cluster (tests/slurm): all virtual nodes share this machine's cores
: "${SCALEPROBE_MPIRUN_FLAGS:=--bind-to none}"
EOF
if [ "$INJECT" = 1 ]; then
  cat >>"$W/site.env" <<EOF
# fault injection (SLURMTEST_INJECT_FAULT=1): the first mpirun job fails
if [ "\$SLURM_JOB_NAME" = sp-allreduce-N2t2c1_mpirun ] && mkdir "$W/injected" 2>/dev/null; then
  echo "scaleprobe-job: injected fault" >&2; exit 1
fi
EOF
fi

RES=$W/results CAMP=ci CDIR=$W/results/ci
SUBMIT=("$ROOT/jobs/submit-sweep" --results "$RES" --campaign "$CAMP" --build-dir "$BUILD"
        --site-env "$W/site.env" --time "$JOB_TIME")
# shellcheck disable=SC2054  # the commas are values (--sizes 8,64K)
AR_ARGS=(-- --sizes 8,64K -n 5)
# shellcheck disable=SC2054
BS_ARGS=(-- --layout "$HERE/tiny.layout" -n 2 -c tensor,1,all -a ring,mpi)
# The weak allreduce point as a campaign file: 2 passes (traces ..._weak_j<job>.h5 and _weak_p2_j<job>.h5).
cat >"$W/arweak.toml" <<'EOF'
name = "ci"
[[sweep]]
bench = "allreduce"
nodes = 1
tasks_per_node = 2
cpus_per_task = 2
scaling = "weak"
repeat = 2
args = ["--sizes", "8,64K", "-n", "5"]
EOF
# The sweep, one submit-sweep call per line (18 point-passes). Multi-node points run 2 ranks per
# virtual node: with the copy probe bounded (core/measure/topology.hpp) they no longer fail (docs/slurm.md).
TRAIN_ARGS=(-- -m gpt-micro -B 2 -s 4 --synthetic-bytes 100000 --val-batches 0 -q)
call() {
  case $1 in
    ar1)    "${SUBMIT[@]}" --bench allreduce --nodes 1 --tasks-per-node 1,2,4 "${@:2}" "${AR_ARGS[@]}";;
    arN)    "${SUBMIT[@]}" --bench allreduce --nodes 2,3 --tasks-per-node 1,2 "${@:2}" "${AR_ARGS[@]}";;
    arweak) "${SUBMIT[@]}" --file "$W/arweak.toml" "${@:2}";;
    armpi)  "${SUBMIT[@]}" --bench allreduce --nodes 2 --tasks-per-node 2 --launcher mpirun "${@:2}" "${AR_ARGS[@]}";;
    bs1)    "${SUBMIT[@]}" --bench bucket_sweep --nodes 1 --tasks-per-node 1,2,4 --array-mode "${@:2}" "${BS_ARGS[@]}";;
    bsN)    "${SUBMIT[@]}" --bench bucket_sweep --nodes 2,3 --tasks-per-node 2 --array-mode "${@:2}" "${BS_ARGS[@]}";;
    bsweak) "${SUBMIT[@]}" --bench bucket_sweep --nodes 1 --tasks-per-node 2 --scaling weak "${@:2}" "${BS_ARGS[@]}";;
    train)  "${SUBMIT[@]}" --bench gpt_train --nodes 1,3 --scaling weak --warn-before 0 "${@:2}" "${TRAIN_ARGS[@]}";;
  esac
}
CALLS=(ar1 arN arweak armpi bs1 bsN bsweak train)
NPOINTS=18      # (point, pass) pairs: the weak allreduce point runs twice

# sweep_all [extra submit-sweep options]: every call; the last one adds --analysis when asked
sweep_all() {
  local c last=${CALLS[-1]}
  for c in "${CALLS[@]}"; do
    if [ "$c" = "$last" ] && [ "${1:-}" = --analysis ]; then call "$c" --analysis; else call "$c"; fi ||
      fail "submit-sweep ($c) failed"
  done
}

# wait_idle SECONDS: until the (private) queue is empty; past the deadline cancel and fail
wait_idle() {
  local start=$SECONDS end=$((SECONDS + $1)) q next=$((SECONDS + 30))
  [ "$end" -le "$BUDGET_END" ] || end=$BUDGET_END
  while :; do
    if q=$(timeout 20 squeue -h -r -o '%i %T %M %j' 2>&1); then
      [ -z "$q" ] && return 0
    else
      q="squeue failed: $q"
    fi
    if [ $SECONDS -ge "$end" ]; then
      echo "$q"
      timeout 20 scancel --full -u "$(id -un)"
      fail "jobs still queued or running after $((SECONDS - start)) s (cancelled)"
    fi
    if [ $SECONDS -ge $next ]; then log "waiting for $(wc -l <<<"$q") job(s): $(tr '\n' ' ' <<<"$q" | cut -c1-200)"; next=$((SECONDS + 30)); fi
    sleep 1
  done
}

check_campaign() {  # prints the checker's lines; sets FAILED (its FAILED lines)
  local out
  out=$(PYTHONPATH="$ROOT/python" /usr/bin/python3 "$HERE/check_campaign.py" "$CDIR/manifest.tsv" --trace-check "$BUILD/core/trace_check" \
        --weak-sizes 8,64K --base-layout "$HERE/tiny.layout" --train-batch 2 --site-env "$W/site.env" --expect-points $NPOINTS 2>&1)
  CHECK_RC=$?
  grep -v '^FAILED ' <<<"$out"
  FAILED=$(grep '^FAILED ' <<<"$out" || true)
}

# report_ok [FAILED_ROW]: the newest report job's log says OK and report.md has the campaign
# sections; no failed run, or exactly the one named (a leftover the resume renamed *.failed)
report_ok() {
  local l r=$CDIR/report/report.md; l=$(ls -t "$CDIR"/logs/report_j*.out 2>/dev/null | head -1)
  [ -n "$l" ] && grep -q '^scaleprobe-job: OK ' "$l" && [ -s "$r" ] || return 1
  local want failed='^| failed | 0 | 0 |'
  [ -z "${1:-}" ] || failed=$1
  for want in '^## Campaign status' "$failed" '^| missing | 0 | 0 |' 'Not read (not traces): .*`checkpoints/`' \
              '^## allreduce across points (strong scaling)' '^## allreduce across points (weak scaling)' \
              '^## bucket_sweep across points (strong scaling)' '^#### Effect of ranks per node' \
              'latency_vs_ranks.png' 'busbw_vs_ranks.png' '^| allreduce_N3_t2_c1 | complete |' '^## trainer scaling: gpt'; do
    grep -q -- "$want" "$r" || { echo "report.md lacks /$want/"; return 1; }
  done
}

# ---------------------------------------------------------------- 1. dry runs
log "1. dry runs"
out=$(call ar1 --dry-run) || fail "dry run failed: $out"
echo "$out"
[ "$(grep -c '^sbatch ' <<<"$out")" = 3 ] || fail "dry run: expected 3 sbatch lines"
for t in 1 2 4; do
  grep -q -- "^sbatch .*--nodes=1 --ntasks-per-node=$t --cpus-per-task=1 .*--time=$JOB_TIME .*jobs/allreduce.sbatch --sizes 8,64K -n 5\$" <<<"$out" ||
    fail "dry run: no line for 1 node x $t tasks with --time=$JOB_TIME and the benchmark arguments"
done
grep -q 'allreduce_N1_t4_c1_j%j.out' <<<"$out" || fail "dry run: log name does not carry the point"
[ ! -e "$RES" ] || fail "dry run wrote $RES"
out=$(call armpi --dry-run) && grep -q 'SCALEPROBE_LAUNCHER=mpirun' <<<"$out" || fail "dry run: mpirun not passed: $out"
out=$(call arweak --dry-run) && grep -q 'SCALEPROBE_SCALING=weak' <<<"$out" && grep -q 'cpus-per-task=2' <<<"$out" &&
  grep -q 'allreduce_N1_t2_c2_weak_p2_j%j.out .*SCALEPROBE_PASS=2 ' <<<"$out" || fail "dry run: weak scaling or pass 2 not passed: $out"
out=$(call bs1 --dry-run --analysis) || fail "dry run (array) failed: $out"
grep -q -- '--array=0-2 --nodes=1 --ntasks-per-node=4 ' <<<"$out" && grep -q 'SCALEPROBE_ARRAY_POINTS=1x1x1:1x2x1:1x4x1' <<<"$out" &&
  grep -q -- '--dependency=afterany:' <<<"$out" || fail "dry run: array or report line wrong: $out"
out=$("${SUBMIT[@]}" --bench allreduce --nodes 2 --tasks-per-node 4 --gpus-per-node 4 --dry-run "${AR_ARGS[@]}" 2>&1) ||
  fail "GPU dry run failed: $out"
grep -q -- '--gpus-per-node=4 ' <<<"$out" && grep -q 'SCALEPROBE_GPUS_PER_NODE=4' <<<"$out" &&
  grep -q 'allreduce_N2_t4_c1_g4_j%j.out' <<<"$out" || fail "GPU dry run: option not wired through: $out"
# A trainer has no --backend nccl (its gradients are on the host): a GPU submission is refused.
"${SUBMIT[@]}" --bench gpt_train --gpus-per-node 4 >/dev/null 2>&1 &&
  fail "a GPU submission of a trainer was accepted (trainers offer no --backend nccl)"
"${SUBMIT[@]}" --bench bucket_sweep --scaling weak --dry-run -- --layout resnet50 >/dev/null 2>&1 ||
  fail "weak bucket_sweep with the built-in layout was refused (the binary scales it now)"
"${SUBMIT[@]}" --bench allreduce --dry-run -- --scaling weak >/dev/null 2>&1 &&
  fail "--scaling among the benchmark arguments was accepted"
[ -z "$(timeout 20 squeue -h)" ] && [ ! -e "$RES" ] || fail "a dry run submitted or wrote something"

# ---------------------------------------------------------------- 2. the sweep
log "2. the sweep ($NPOINTS points + report)"
sweep_all --analysis
# While they run: a resubmission skips queued points and a report waits for the queued jobs.
out=$(call bsweak --dry-run --analysis) || fail "dry run during the sweep failed: $out"
grep -q '^# skip bucket_sweep_N1_t2_c1_weak: job [0-9]* is still queued or running' <<<"$out" &&
  ! grep -q '^sbatch .*bucket_sweep.sbatch' <<<"$out" && grep -q -- '--dependency=afterany:[0-9]*:[0-9]' <<<"$out" ||
  fail "a resubmission during the sweep did not skip the queued point: $out"
wait_idle "$ROUND_S"
log "round 1 finished"
check_campaign
if [ -n "$FAILED" ] || [ "$CHECK_RC" != 0 ]; then
  nfail=$(grep -c . <<<"$FAILED")
  [ -n "$FAILED" ] && [ "$nfail" -le 2 ] || fail "$nfail point(s) failed (the checker's lines above)"
  echo "$FAILED" | while read -r _ key logf; do
    echo "==== WARNING: $key failed; its log ($logf), last 40 lines:"; tail -n 40 "$logf" 2>/dev/null
  done
  log "WARNING: resubmitting the $nfail failed point(s) once (resume); see the flakiness note in docs/slurm.md"
  sweep_all --analysis
  wait_idle "$ROUND_S"
  check_campaign
  [ "$CHECK_RC" = 0 ] || fail "point(s) failed twice: $FAILED"
fi
report_ok || { tail -n 30 "$CDIR"/logs/report_j*.out; fail "the report job did not produce $CDIR/report/report.md"; }
log "sweep OK: $NPOINTS traces valid and matching their points, report written"

# ---------------------------------------------------------------- 3. resume
log "3. resume: the same submissions again submit nothing"
rows=$(wc -l <"$CDIR/manifest.tsv")
for c in "${CALLS[@]}"; do
  out=$(call "$c") || fail "resume ($c) failed: $out"
  grep -q '^sbatch ' <<<"$out" && fail "resume ($c) submitted again: $out"
  grep -q '^# skip .*: complete' <<<"$out" || fail "resume ($c) did not report skipped points: $out"
done
[ -z "$(timeout 20 squeue -h)" ] || fail "resume submitted jobs"
[ "$(awk -F'\t' -v r="$rows" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "status") k = i } NR > r && $k != "complete"' "$CDIR/manifest.tsv" | wc -l)" = 0 ] ||
  fail "resume added manifest rows other than 'complete'"

log "3b. resume after losing one trace and with a stale partial trace"
gone=$(ls "$CDIR"/bucket_sweep_N1_t2_c1_j*.h5) && rm -f "$gone" || fail "no bucket_sweep N1 t2 trace"
stale=$CDIR/allreduce_N1_t1_c1_j1.h5.partial
echo "killed run" >"$stale"
out=$(call ar1) || fail "resume (ar1) failed: $out"
echo "$out"
grep -q '^sbatch ' <<<"$out" && fail "resume (ar1) resubmitted a complete point"
[ ! -e "$stale" ] && [ -e "$stale.failed" ] || fail "the stale partial trace was not renamed"
out=$(call bs1 --analysis) || fail "resume (bs1) failed: $out"
echo "$out"
[ "$(grep -c '^sbatch .*bucket_sweep.sbatch' <<<"$out")" = 1 ] && grep -q -- '--array=0-0 .*SCALEPROBE_ARRAY_POINTS=1x2x1 ' <<<"$out" ||
  fail "resume (bs1) should resubmit exactly the lost point"
wait_idle 240
check_campaign
[ "$CHECK_RC" = 0 ] || fail "the resubmitted point failed: $FAILED"
ls "$CDIR"/bucket_sweep_N1_t2_c1_j*.h5 >/dev/null 2>&1 || fail "the lost trace was not made again"
report_ok '^| allreduce_N1_t1_c1 | 1 | failed | allreduce_N1_t1_c1_j1.h5.partial.failed |' ||
  { tail -n 30 "$(ls -t "$CDIR"/logs/report_j*.out | head -1)"; fail "the report after the resume failed"; }
log "PASS: dry runs, $NPOINTS-point sweep, report, resume"
