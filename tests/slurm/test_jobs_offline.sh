#!/usr/bin/env bash
# CTest slurm_jobs_offline (label slurm): the job scripts' and submitter's logic that needs no
# SLURM daemons: refusals (outside an allocation, uneven tasks, world-size mismatch, GPU path,
# bad submitter input), weak-scaling arithmetic, trace naming, dry-run lines, and the resume
# test of a dry run. A fake `srun` (on PATH) stands in for the launcher where one is needed.
#   tests/slurm/test_jobs_offline.sh [BUILD_DIR]
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(realpath -m "${1:-$ROOT/build/release}")
for v in $(compgen -e | grep -E '^(SLURM_|SBATCH_|SRUN_|SCALEPROBE_)' || true); do unset "$v"; done
W=$(mktemp -d /tmp/scaleprobe-jobs-offline.XXXXXX)
trap 'rm -rf "$W"' EXIT
n=0 bad=0
ok()   { n=$((n + 1)); echo "ok   $*"; }
no()   { n=$((n + 1)); bad=$((bad + 1)); echo "FAIL $*"; }
# expect NAME RC PATTERN CMD...: CMD exits RC and its output matches the extended regex PATTERN
expect() {
  local name=$1 rc=$2 pat=$3; shift 3
  local out r=0; out=$("$@" 2>&1) || r=$?
  if [ "$r" = "$rc" ] && grep -Eq -- "$pat" <<<"$out"; then ok "$name"; else no "$name (exit $r): $out"; fi
}

AR=$ROOT/jobs/allreduce.sbatch SUB=$ROOT/jobs/submit-sweep
export SCALEPROBE_ROOT=$ROOT SCALEPROBE_BUILD_DIR=$BUILD SCALEPROBE_RESULTS=$W/results

# --- job scripts outside / inside a (fake) allocation ---
expect "job outside an allocation is refused" 2 'not inside a SLURM allocation' bash "$AR"
fake=(env SLURM_JOB_ID=77 SLURM_JOB_NUM_NODES=2 SLURM_NTASKS=3 SLURM_TASKS_PER_NODE="2,1" SLURM_JOB_NODELIST="n[1-2]")
expect "uneven tasks per node are refused" 2 'uneven tasks per node' "${fake[@]}" bash "$AR"
mkdir -p "$W/bin"
cat >"$W/bin/srun" <<'EOF'
#!/bin/bash
# fake srun: starts only one task, whatever was asked
while [[ $1 == -* ]]; do shift; done
SLURM_PROCID=0 SLURM_NODEID=0 SLURMD_NODENAME=n1 "$@"
EOF
chmod +x "$W/bin/srun"
alloc=(env PATH="$W/bin:$PATH" SLURM_JOB_ID=78 SLURM_JOB_NUM_NODES=1 SLURM_NTASKS=2 SLURM_NTASKS_PER_NODE=2 SLURM_JOB_NODELIST=n1)
expect "world size != SLURM_NTASKS aborts before the benchmark" 1 'world size mismatch: srun started 1 ranks .*SLURM_NTASKS=2' \
  "${alloc[@]}" bash "$AR" --sizes 8 -n 1
[ ! -e "$W/results/default/allreduce_N1_t2_c1_j78.h5" ] && ok "no trace after the abort" || no "a trace was written after the abort"
expect "the rank map is printed first" 1 'rankmap rank=0 node=n1 nodeid=0 host=' "${alloc[@]}" bash "$AR"
expect "GPU path: the missing NCCL build is named" 2 'selects the NCCL build of allreduce .*allreduce_perf_nccl.*not in this version' \
  "${alloc[@]}" SCALEPROBE_GPUS_PER_NODE=2 bash "$AR"
expect "-o is refused (the job names the trace)" 2 'the job script names the trace' "${alloc[@]}" bash "$AR" -o x.h5
expect "a missing site file is refused" 2 'SCALEPROBE_SITE_ENV=/nonexistent: no such file' "${alloc[@]}" SCALEPROBE_SITE_ENV=/nonexistent bash "$AR"
expect "a bad launcher is refused" 2 'SCALEPROBE_LAUNCHER=ssh' "${alloc[@]}" SCALEPROBE_LAUNCHER=ssh bash "$AR"
expect "a bad campaign is refused" 2 "campaign '../x'" "${alloc[@]}" SCALEPROBE_CAMPAIGN=../x bash "$AR"

# A job killed at its time limit (SIGTERM to the whole job) moves its partial trace aside.
mkdir -p "$W/bin2"
cat >"$W/bin2/srun" <<'FAKE'
#!/bin/bash
# fake srun: the rank-map step runs --ntasks copies; the benchmark leaves a partial trace and hangs
n=1
while [[ $1 == -* ]]; do case $1 in --ntasks=*) n=${1#*=};; esac; shift; done
if [ "$1" = bash ]; then
  for ((i = 0; i < n; i++)); do SLURM_PROCID=$i SLURM_NODEID=0 SLURMD_NODENAME=n1 "$@"; done
  exit
fi
prev=""; for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
echo partial >"$out.partial"
exec sleep 60
FAKE
chmod +x "$W/bin2/srun"
env PATH="$W/bin2:$PATH" SLURM_JOB_ID=79 SLURM_JOB_NUM_NODES=1 SLURM_NTASKS=2 SLURM_NTASKS_PER_NODE=2 \
  setsid bash "$AR" --sizes 8 >"$W/term.log" 2>&1 &
job=$!
partial=$W/results/default/allreduce_N1_t2_c1_j79.h5.partial
for _ in $(seq 1 100); do [ -e "$partial" ] && break; sleep 0.1; done
kill -TERM -- "-$job" 2>/dev/null   # setsid made the job its own process group, like a SLURM step
rc=0; wait "$job" || rc=$?
if [ "$rc" = 1 ] && [ -e "$partial.failed" ] && [ ! -e "$partial" ] && grep -q 'terminated (time limit or scancel)' "$W/term.log" &&
   grep -q '^rankmap rank=1 ' "$W/term.log"; then ok "a job killed by SIGTERM moves its partial trace to *.failed"
else no "SIGTERM (exit $rc): $(cat "$W/term.log")"; fi

# --- library: naming and weak scaling ---
lib() { bash -c 'set -euo pipefail; source "$0/jobs/lib/common.sh"; '"$1" "$ROOT"; }
expect "trace name" 0 '^allreduce_N2_t4_c1_j12\.h5$' lib 'sp_trace_name allreduce 2 4 1 0 strong srun 12'
expect "trace name (gpu, weak, mpirun, array)" 0 '^bucket_sweep_N1_t2_c3_g2_weak_mpirun_j5_1\.h5$' lib 'sp_trace_name bucket_sweep 1 2 3 2 weak mpirun 5_1'
expect "strong: arguments pass through" 0 '^--sizes\|8,64K\|-n\|5$' lib 'SP_SCALING=strong; sp_bench_args allreduce 8 --sizes 8,64K -n 5; IFS="|"; echo "${SP_ARGS[*]}"'
expect "weak: --sizes x ranks" 0 '^--sizes\|64,524288\|-n\|5$' lib 'SP_SCALING=weak; sp_bench_args allreduce 8 --sizes 8,64K -n 5; IFS="|"; echo "${SP_ARGS[*]}"'
expect "weak: -b/-e x ranks" 0 '^-b\|24\|-e\|3145728$' lib 'SP_SCALING=weak; sp_bench_args allreduce 3 -b 8 --max-bytes=1M; IFS="|"; echo "${SP_ARGS[*]}"'
expect "weak: binary defaults scaled" 0 '^-a\|ring\|-b\|16\|-e\|134217728$' lib 'SP_SCALING=weak; sp_bench_args allreduce 2 -a ring; IFS="|"; echo "${SP_ARGS[*]}"'
expect "trainer, strong: -B is the global batch" 0 '^--global-batch\|16\|-s\|5$' lib 'SP_SCALING=strong; sp_bench_args gpt_train 4 -B 16 -s 5; IFS="|"; echo "${SP_ARGS[*]}"'
expect "trainer, weak: -B is per rank" 0 '^-B\|4\|-m\|gpt-micro$' lib 'SP_SCALING=weak; sp_bench_args gpt_train 4 --batch=4 -m gpt-micro; IFS="|"; echo "${SP_ARGS[*]}"'
expect "trainer, strong without -B refused" 2 'strong scaling of gpt_train needs -B N' lib 'SP_SCALING=strong; sp_bench_args gpt_train 2 -s 5'
expect "trainer: --resume refused (the job manages the checkpoint)" 2 'manages the checkpoint' lib 'SP_SCALING=weak; sp_bench_args resnet_train 2 -B 2 --resume x.h5'
expect "trainer: --global-batch refused (the scaling decides)" 2 'do not pass --global-batch' lib 'SP_SCALING=weak; sp_bench_args gpt_train 2 --global-batch 8'
expect "trainer dry run: the warning signal" 0 'sbatch .*--signal=B:USR1@120 .*jobs/gpt_train.sbatch -B 8' \
  "$SUB" --bench gpt_train --nodes 2 --dry-run -- -B 8 -s 5
expect "--requeue only for trainers" 2 '--requeue is for trainer jobs' "$SUB" --bench allreduce --requeue --dry-run
expect "weak: bad size refused" 2 "cannot scale size '8Q'" lib 'SP_SCALING=weak; sp_bench_args allreduce 2 --sizes 8,8Q'
expect "weak: layout file scaled" 0 '^conv1.weight 1728 conv1.bias 64 block.weight 18432 block.bias 128 fc.weight 1280 fc.bias 40 $' \
  lib 'SP_SCALING=weak SP_LAYOUT_OUT='"$W"'/l/x.layout; sp_bench_args bucket_sweep 4 --layout '"$ROOT"'/tests/slurm/tiny.layout -n 2; tr "\n" " " <"$SP_LAYOUT_OUT"'
expect "weak: built-in layout refused" 2 'needs a layout file' lib 'SP_SCALING=weak; sp_bench_args bucket_sweep 4 --layout resnet50'

# --- submitter: refusals and dry runs (no SLURM needed) ---
expect "submitter: --bench required" 2 '--bench is required' "$SUB" --dry-run
expect "submitter: bad list" 2 "--tasks-per-node 1,x: 'x' is not a positive integer" "$SUB" --bench allreduce --tasks-per-node 1,x --dry-run
expect "submitter: unknown option" 2 'unknown option --nodez' "$SUB" --bench allreduce --nodez 1
expect "submitter: GPU run refused without the NCCL build" 2 'NCCL build .* not in this version' "$SUB" --bench allreduce --gpus-per-node 2
expect "submitter: weak bucket_sweep needs a layout file" 2 'needs a layout file' "$SUB" --bench bucket_sweep --scaling weak --dry-run
out=$("$SUB" --bench allreduce --campaign c1 --nodes 1,2 --tasks-per-node 1,2 --cpus-per-task 2 --time 7 --partition p1 --account a1 \
      --qos q1 --sbatch-opt=--exclusive --analysis --dry-run -- --sizes 8,1K -a ring 2>&1)
if [ "$(grep -c '^sbatch .*allreduce.sbatch' <<<"$out")" = 4 ] &&
   grep -q -- '^sbatch --parsable --job-name=sp-allreduce-N2t2c2 --nodes=2 --ntasks-per-node=2 --cpus-per-task=2 --time=7 --partition=p1 --account=a1 --qos=q1 --exclusive --output=[^ ]*/c1/logs/allreduce_N2_t2_c2_j%j.out --export=ALL,SCALEPROBE_ROOT=[^ ]*,SCALEPROBE_CAMPAIGN=c1,SCALEPROBE_SCALING=strong,SCALEPROBE_LAUNCHER=srun,SCALEPROBE_SRUN_MPI=pmix,SCALEPROBE_GPUS_PER_NODE=0 [^ ]*/jobs/allreduce.sbatch --sizes 8,1K -a ring$' <<<"$out" &&
   grep -q -- "^sbatch .* '--dependency=afterok:<job ids of the jobs above>' .*jobs/report.sbatch$" <<<"$out" &&
   [ ! -e "$W/results/c1" ]; then ok "dry run: grid lines, sbatch options, report line, nothing written"
else no "dry run lines: $out"; fi
out=$("$SUB" --bench allreduce --nodes 2 --tasks-per-node 4 --gpus-per-node 4 --launcher mpirun --dry-run 2>&1)
grep -q -- '--gpus-per-node=4 .*SCALEPROBE_LAUNCHER=mpirun,.*SCALEPROBE_GPUS_PER_NODE=4 ' <<<"$out" && grep -q 'allreduce_N2_t4_c1_g4_mpirun_j%j.out' <<<"$out" &&
  ok "dry run: GPU option wired through" || no "dry run GPU: $out"
out=$("$SUB" --bench bucket_sweep --nodes 1,2 --tasks-per-node 1,4 --cpus-per-task 1,2 --array-mode --dry-run -- --layout resnet50 2>&1)
grep -q -- '--array=0-7 --nodes=2 --ntasks-per-node=4 --cpus-per-task=2 .*SCALEPROBE_ARRAY_POINTS=1x1x1:1x1x2:1x4x1:1x4x2:2x1x1:2x1x2:2x4x1:2x4x2 ' <<<"$out" &&
  ok "dry run: one array sized to the largest point" || no "dry run array: $out"

# --- resume in a dry run: a valid trace under the point's name is skipped ---
mkdir -p "$W/results/r"
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 \
  "$BUILD/collectives/allreduce_perf" --sizes 8 -n 1 -a mpi --no-membw -q -o "$W/results/r/allreduce_N1_t1_c1_j3.h5" >/dev/null 2>&1
echo partial >"$W/results/r/allreduce_N1_t2_c1_j4.h5.partial"
out=$("$SUB" --bench allreduce --campaign r --tasks-per-node 1,2 --dry-run 2>&1)
grep -q '^# skip allreduce_N1_t1_c1: complete' <<<"$out" && [ "$(grep -c '^sbatch ' <<<"$out")" = 1 ] &&
  grep -q 'would rename .*allreduce_N1_t2_c1_j4.h5.partial' <<<"$out" && [ -e "$W/results/r/allreduce_N1_t2_c1_j4.h5.partial" ] &&
  ok "dry-run resume: complete point skipped, stale partial reported, not touched" || no "dry-run resume: $out"

echo "$((n - bad))/$n passed"
[ "$bad" = 0 ]
