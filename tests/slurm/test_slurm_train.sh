#!/usr/bin/env bash
# The trainer jobs on a real SLURM cluster (CTest slurm_train, label slurm): a private local
# cluster (2 virtual nodes), then
#  1. a small scaling sweep of jobs/gpt_train.sbatch through jobs/submit-sweep: weak scaling on
#     1 node x 1 task and 2 nodes x 2 tasks (-B 4 per rank) and strong scaling on 2 nodes x 2 tasks
#     without -B (the trainer's default batch, 8, is the global batch), srun --mpi=pmix; every trace
#     valid, with the point's ranks, scaling and global batch (the job passes --scaling to the
#     trainer, which computes the batch split);
#  2. the time-limit path: a long training job submitted with --requeue gets the warning signal
#     (scancel --signal=USR1 --batch: what --signal=B:USR1@S delivers before the limit, without
#     waiting for a limit), checkpoints, requeues itself, resumes from the checkpoint and
#     finishes; the segment's trace says it was interrupted, the final one where it resumed.
#   tests/slurm/test_slurm_train.sh [BUILD_DIR]        (default build/release; needs root)
# Every wait is bounded; the daemons are stopped by PID on exit (and by a watchdog).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/slurm
BUILD=$(realpath -m "${1:-$ROOT/build/release}")
T0=$SECONDS
log()  { echo "[slurm-train +$((SECONDS - T0))s] $*"; }
fail() { echo "[slurm-train +$((SECONDS - T0))s] FAIL: $*"; exit 1; }

export PATH=$PATH:/usr/sbin:/sbin
for c in munged slurmctld slurmd sbatch squeue scancel scontrol; do
  command -v "$c" >/dev/null || fail "missing $c: install slurm-wlm and munge (scripts/install-deps.sh)"
done
[ "$(id -u)" = 0 ] || fail "the local cluster's daemons run as root: run this test as root"
for b in trainers/gpt/gpt_train core/trace_check; do
  [ -x "$BUILD/$b" ] || fail "no $BUILD/$b: build first"
done
# shellcheck source=test_cluster.sh
source "$HERE/test_cluster.sh"
start_test_cluster scaleprobe-slurm-train 2 4

RES=$W/results
SUBMIT=("$ROOT/jobs/submit-sweep" --results "$RES" --build-dir "$BUILD" --time 3)
TRAIN=(-m gpt-micro -s 8 --synthetic-bytes 100000 --val-batches 2 -q)
# wait_idle SECONDS: until no job is queued or running. A failed squeue (slurmctld busy, e.g. while
# it requeues a job) is not an empty queue: it once ended the wait before a requeued job ran.
wait_idle() {
  local end=$((SECONDS + $1)) q
  while :; do
    if q=$(timeout 20 squeue -h -r -o '%i %T %j' 2>&1); then
      [ -z "$q" ] && return 0
    else
      q="squeue failed: $q"
    fi
    [ $SECONDS -lt "$end" ] || { echo "$q"; timeout 20 scancel --full -u "$(id -un)"; fail "jobs still queued after $1 s"; }
    sleep 1
  done
}
attr() { "$BUILD/core/trace_check" --attribute "$1" "$2"; }

# ---------------------------------------------------------------- 1. scaling sweep
log "1. gpt_train sweep: weak on 1 node x 1 task and 2 nodes x 2 tasks, strong on 2 nodes x 2 tasks"
"${SUBMIT[@]}" --campaign weak --bench gpt_train --nodes 1 --scaling weak -- -B 4 "${TRAIN[@]}" || fail "submit (weak) failed"
"${SUBMIT[@]}" --campaign weak --bench gpt_train --nodes 2 --tasks-per-node 2 --scaling weak -- -B 4 "${TRAIN[@]}" || fail "submit (weak) failed"
"${SUBMIT[@]}" --campaign strong --bench gpt_train --nodes 2 --tasks-per-node 2 -- "${TRAIN[@]}" || fail "submit (strong) failed"
wait_idle 240
for spec in "weak 1 1 4 weak" "weak 2 2 16 weak" "strong 2 2 8 strong"; do   # campaign nodes tasks/node global_batch scaling
  read -r camp n tpn gb scaling <<<"$spec"
  suffix=""; [ "$scaling" = weak ] && suffix=_weak
  t=$(ls "$RES/$camp"/gpt_train_N${n}_t${tpn}_c1${suffix}_j*.h5 2>/dev/null | head -1)
  [ -n "$t" ] || { tail -n 30 "$RES/$camp"/logs/*N${n}*.out; fail "no trace for $camp N$n"; }
  "$BUILD/core/trace_check" "$t" | grep -q " ranks=$((n * tpn)) " || fail "$t: not $((n * tpn)) ranks"
  [ "$(attr scaling "$t")" = "$scaling" ] && [ "$(attr global_batch "$t")" = "$gb" ] ||
    fail "$t: scaling $(attr scaling "$t") global batch $(attr global_batch "$t"), expected $scaling $gb"
  grep -q '^rankmap rank=' "$RES/$camp"/logs/gpt_train_N${n}_*.out || fail "$camp N$n: no rank map in the log"
  grep -q -- "gpt_train .* --scaling $scaling\$" "$RES/$camp"/logs/gpt_train_N${n}_*.out || fail "$camp N$n: the trainer did not get --scaling $scaling"
done
log "sweep OK"

# ---------------------------------------------------------------- 2. time limit: signal, checkpoint, requeue, resume
log "2. a long job gets the time-limit signal, checkpoints, requeues and resumes"
LONG=(-m gpt-micro -s 20000 --synthetic-bytes 100000 --val-batches 0 -q)
"${SUBMIT[@]}" --campaign limit --bench gpt_train --nodes 2 --scaling weak --requeue --warn-before 20 -- -B 2 "${LONG[@]}" >"$W/submit.out" ||
  fail "submit (limit) failed: $(cat "$W/submit.out")"
grep -q -- '--signal=B:USR1@20 --requeue' "$W/submit.out" || fail "the trainer job was not submitted with the signal and --requeue"
id=$(grep -o 'job [0-9]*' "$W/submit.out" | head -1 | cut -d' ' -f2)
[ -n "$id" ] || fail "no job id in: $(cat "$W/submit.out")"
logf=$RES/limit/logs/gpt_train_N2_t1_c1_weak_j$id.out
end=$((SECONDS + 120))
until [ -f "$logf" ] && grep -q '^ok: .*kind=train\|binary: ' "$logf" && grep -q '^rankmap ' "$logf"; do
  [ $SECONDS -lt $end ] || fail "the job did not start training within 120 s"
  sleep 1
done
sleep 4   # let it train a few thousand steps
[ "$(timeout 20 squeue -h -j "$id" -o %T)" = RUNNING ] || fail "job $id finished before the signal: make LONG longer"
timeout 20 scancel --signal=USR1 --batch "$id" || fail "scancel --signal=USR1 --batch $id failed"
log "signalled job $id"
# SLURM holds a requeued job back (BeginTime about 2 minutes ahead, measured here): once the
# segment is written, release it now so the test stays short.
end=$((SECONDS + 120))
until ls "$RES"/limit/segments/*_r0.h5 >/dev/null 2>&1 && [ "$(timeout 20 squeue -h -j "$id" -o %T)" = PENDING ]; do
  [ $SECONDS -lt $end ] || { cat "$logf"; fail "job $id did not checkpoint and requeue within 120 s of the signal"; }
  sleep 1
done
# Not within the second of the requeue: slurmd compares the new launch's credential with the
# revocation of the old one in whole seconds, and refuses a start in the same second ("Killing
# non-startable batch JobId=...: Job credential revoked", seen once: the job then ends, exit 1).
sleep 2
timeout 20 scontrol update JobId="$id" StartTime=now || fail "scontrol update StartTime=now failed"
wait_idle 240
seg=$(ls "$RES"/limit/segments/gpt_train_N2_t1_c1_weak_j${id}_r0.h5 2>/dev/null)
final=$RES/limit/gpt_train_N2_t1_c1_weak_j$id.h5
cat "$logf"
[ -n "$seg" ] || fail "no interrupted segment trace in $RES/limit/segments"
[ -f "$final" ] || fail "the requeued job left no final trace $final"
[ "$(attr interrupted_by_signal "$seg")" = 10 ] || fail "the segment does not record SIGUSR1 (10): $(attr interrupted_by_signal "$seg")"
stopped=$(attr last_step "$seg")
[ "$stopped" -gt 1 ] && [ "$stopped" -lt 20000 ] || fail "the segment stopped at step $stopped"
[ "$(attr first_step "$final")" = $((stopped + 1)) ] || fail "the final run started at step $(attr first_step "$final"), not $((stopped + 1))"
[ "$(attr last_step "$final")" = 20000 ] && [ "$(attr interrupted_by_signal "$final")" = 0 ] || fail "the final run did not finish"
grep -q 'resuming from ' "$logf" || fail "the requeued job did not say it resumed"
log "PASS: sweep, and interrupted at step $stopped -> requeued -> resumed at $((stopped + 1)) -> finished"
