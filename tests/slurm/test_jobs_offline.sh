#!/usr/bin/env bash
# CTest slurm_jobs_offline (label slurm): the job scripts' and submitter's logic that needs no
# SLURM daemons. Fake `srun`/`mpirun` (the launcher inside a job) and `sbatch`/`squeue` (for the
# submitter) on PATH stand in for SLURM:
#  - job scripts: refusals (outside an allocation, uneven tasks, world-size mismatch, GPU path,
#    bad settings, arguments the job owns), what the binary gets (--scaling, the trace name with
#    its pass, SCALEPROBE_* provenance), array points with passes, trainer checkpoints per pass;
#  - submitter: refusals, dry-run lines (grid, --repeat, arrays, afterany report), campaign files
#    (expansion, TOML = JSON, flags overriding the file, one-line errors), and the resume per
#    (point, pass) with a fake queue, including a manifest written by the old bash submitter.
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
# expect_error NAME PATTERN CMD...: exit 2 with exactly one line, "submit-sweep: error: ..." matching PATTERN
expect_error() {
  local name=$1 pat=$2; shift 2
  local out r=0; out=$("$@" 2>&1) || r=$?
  if [ "$r" = 2 ] && [ "$(grep -c . <<<"$out")" = 1 ] && grep -Eq -- "^submit-sweep: error: .*$pat" <<<"$out"; then ok "$name"
  else no "$name (exit $r): $out"; fi
}

AR=$ROOT/jobs/allreduce.sbatch GPT=$ROOT/jobs/gpt_train.sbatch SUB=$ROOT/jobs/submit-sweep
# From the dimension table (python/scaleprobe_sweep/dimensions.py), so a new dimension needs no edit
# here: every dimension's variable at its default as --export lists it, and the manifest's header.
table() { PYTHONPATH="$ROOT/python" /usr/bin/python3 -c "from scaleprobe_sweep import dimensions, manifest; $1"; }
DEFAULT_EXPORTS=$(table 'print(",".join(dimensions.exports(dimensions.defaults())))')
MANIFEST_HEADER=$(table 'print("\t".join(manifest.COLUMNS))')
export SCALEPROBE_ROOT=$ROOT SCALEPROBE_BUILD_DIR=$BUILD SCALEPROBE_RESULTS=$W/results

# A real 1-rank trace: what the fake launcher "writes" and what a finished point looks like.
REAL=$W/real.h5
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 \
  "$BUILD/collectives/allreduce_perf" --sizes 8 -n 1 -a mpi --no-membw -q -o "$REAL" >/dev/null 2>&1
"$BUILD/core/trace_check" "$REAL" >/dev/null 2>&1 || { echo "FAIL no valid trace from $BUILD/collectives/allreduce_perf"; exit 1; }

# --- job scripts outside / inside a (fake) allocation ---
expect "job outside an allocation is refused" 2 'not inside a SLURM allocation' bash "$AR"
fake=(env SLURM_JOB_ID=77 SLURM_JOB_NUM_NODES=2 SLURM_NTASKS=3 SLURM_TASKS_PER_NODE="2,1" SLURM_JOB_NODELIST="n[1-2]")
expect "uneven tasks per node are refused" 2 'uneven tasks per node' "${fake[@]}" bash "$AR"
mkdir -p "$W/bin"
ln -s "$(cd "$(dirname "$0")/../lib" && pwd)/fake_srun" "$W/bin/srun"
alloc=(env PATH="$W/bin:$PATH" SLURM_JOB_ID=78 SLURM_JOB_NUM_NODES=1 SLURM_NTASKS=2 SLURM_NTASKS_PER_NODE=2 SLURM_JOB_NODELIST=n1)
expect "world size != SLURM_NTASKS aborts before the benchmark" 1 'world size mismatch: srun started 1 ranks .*SLURM_NTASKS=2' \
  "${alloc[@]}" bash "$AR" --sizes 8 -n 1
[ ! -e "$W/results/default/allreduce_N1_t2_c1_j78.h5" ] && ok "no trace after the abort" || no "a trace was written after the abort"
expect "the rank map is printed first" 1 'rankmap rank=0 node=n1 nodeid=0 host=' "${alloc[@]}" bash "$AR"
expect "GPU path: a trainer is refused, naming why" 2 'runs gpt_train on --backend nccl, which .*gpt_train does not offer \(.*trainers run on the CPU\)' \
  "${alloc[@]}" SCALEPROBE_GPUS_PER_NODE=2 bash "$GPT"
expect "-o is refused (the job names the trace)" 2 'do not pass -o: the job script names the trace' "${alloc[@]}" bash "$AR" -o x.h5
expect "--trace=FILE is refused" 2 'do not pass --trace=x.h5' "${alloc[@]}" bash "$AR" --trace=x.h5
expect "--scaling is refused (the sweep's scaling decides)" 2 'do not pass --scaling: the sweep' "${alloc[@]}" bash "$AR" --scaling weak
expect "trainer: --resume is refused (the job manages the checkpoint)" 2 'do not pass --resume=x.h5: the job script manages the checkpoint' \
  "${alloc[@]}" bash "$GPT" -B 2 --resume=x.h5
expect "trainer: --init-from is refused" 2 'do not pass --init-from: the job script manages' "${alloc[@]}" bash "$GPT" --init-from x.h5
expect "trainer: --global-batch is refused" 2 'do not pass --global-batch: -B N is the global batch under strong' \
  "${alloc[@]}" bash "$GPT" --global-batch 8
expect "a bad pass number is refused" 2 'SCALEPROBE_PASS=0: not a pass number' "${alloc[@]}" SCALEPROBE_PASS=0 bash "$AR"
expect "a missing site file is refused" 2 'SCALEPROBE_SITE_ENV=/nonexistent: no such file' "${alloc[@]}" SCALEPROBE_SITE_ENV=/nonexistent bash "$AR"
expect "a bad launcher is refused" 2 'SCALEPROBE_LAUNCHER=ssh' "${alloc[@]}" SCALEPROBE_LAUNCHER=ssh bash "$AR"
expect "a bad campaign is refused" 2 "campaign '../x'" "${alloc[@]}" SCALEPROBE_CAMPAIGN=../x bash "$AR"

# --- what the binary gets: a fake launcher (srun and mpirun) that runs the rank-map probe once
# per rank, and for the benchmark records its arguments and SCALEPROBE_* environment, then
# "writes" the trace by copying $FAKE_TRACE to the -o path (or fails without FAKE_TRACE).
mkdir -p "$W/launch"
cat >"$W/launch/srun" <<'FAKE'
#!/bin/bash
[ "$1" = --version ] && { echo "${FAKE_MPIRUN_VERSION:-mpirun (Open MPI) 4.1.4}"; exit 0; }
all="$*" n=1
while [ $# -gt 0 ]; do
  case $1 in
    --ntasks=*) n=${1#*=};;
    -np|-n) n=$2; shift;;
    --map-by|-x|-ppn|-bind-to|-genvlist) shift;;
    -*) ;;
    *) break;;
  esac
  shift
done
if [ "$1" = bash ]; then
  for ((i = 0; i < n; i++)); do SLURM_PROCID=$i OMPI_COMM_WORLD_RANK=$i SLURM_NODEID=0 SLURMD_NODENAME=n1 "$@"; done
  exit 0
fi
{ echo "launcher: $(basename "$0") $all"; echo "binary: $*"; env | grep '^SCALEPROBE_' | sort; } >"$FAKE_LOG"
prev=""; for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
[ -n "${FAKE_TRACE:-}" ] || exit 1
cp "$FAKE_TRACE" "$out"
FAKE
chmod +x "$W/launch/srun" && ln -s srun "$W/launch/mpirun"
one=(env PATH="$W/launch:$PATH" FAKE_LOG="$W/fake.log" SLURM_JOB_NUM_NODES=1 SLURM_NTASKS=1 SLURM_NTASKS_PER_NODE=1 SLURM_JOB_NODELIST=n1)
t=$W/results/default/allreduce_N1_t1_c1_weak_p2_j80.h5
expect "weak pass-2 job: OK with the trace named after point and pass" 0 "scaleprobe-job: OK $t\$" \
  "${one[@]}" SLURM_JOB_ID=80 FAKE_TRACE="$REAL" SCALEPROBE_SCALING=weak SCALEPROBE_PASS=2 bash "$AR" --sizes 8,64K -n 5
expect "weak: the binary gets the sizes unchanged plus --scaling weak" 0 "^binary: [^ ]*/bin/allreduce_perf --sizes 8,64K -n 5 --scaling weak -o $t\$" cat "$W/fake.log"
for kv in SCALEPROBE_POINT=allreduce_N1_t1_c1_weak SCALEPROBE_PASS=2 SCALEPROBE_SCALING=weak SCALEPROBE_CAMPAIGN=default SCALEPROBE_LAUNCHER=srun; do
  grep -qx "$kv" "$W/fake.log" && ok "the binary's environment has $kv" || no "no $kv in: $(cat "$W/fake.log")"
done
[ ! -e "$W/results/default/layouts" ] && ok "no scaled layout files any more" || no "a layouts/ folder was written"
t=$W/results/default/allreduce_N1_t1_c1_gloo_j79.h5
expect "a Gloo job: OK with _gloo in the point name" 0 "scaleprobe-job: OK $t\$" \
  "${one[@]}" SLURM_JOB_ID=79 FAKE_TRACE="$REAL" SCALEPROBE_BACKEND=gloo bash "$AR" --sizes 8
expect "gloo: the binary gets --backend gloo after --scaling" 0 "^binary: [^ ]*/bin/allreduce_perf --sizes 8 --scaling strong --backend gloo -o $t\$" cat "$W/fake.log"
grep -qx SCALEPROBE_BACKEND=gloo "$W/fake.log" && ok "the binary's environment has SCALEPROBE_BACKEND=gloo" || no "no SCALEPROBE_BACKEND in: $(cat "$W/fake.log")"
# p2p (jobs/p2p.sbatch): a pair of ranks, the point named p2p_..., the binary p2p_perf.
P2P_REAL=$W/p2p.h5
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  mpirun -np 2 "$BUILD/bin/p2p_perf" --sizes 4 -n 1 -q -o "$P2P_REAL" >/dev/null 2>&1
t=$W/results/default/p2p_N1_t2_c1_j84.h5
expect "a p2p job: OK with the trace named after its point" 0 "scaleprobe-job: OK $t\$" \
  env PATH="$W/launch:$PATH" FAKE_LOG="$W/fake.log" SLURM_JOB_NUM_NODES=1 SLURM_NTASKS=2 SLURM_NTASKS_PER_NODE=2 \
  SLURM_JOB_NODELIST=n1 SLURM_JOB_ID=84 FAKE_TRACE="$P2P_REAL" bash "$ROOT/jobs/p2p.sbatch" -t latency --sizes 4
expect "p2p: the binary gets its arguments and --scaling strong" 0 "^binary: [^ ]*/bin/p2p_perf -t latency --sizes 4 --scaling strong -o $t\$" cat "$W/fake.log"
# collective (jobs/collective.sbatch): the point named collective_..., the binary collective_perf.
COLL_REAL=$W/collective.h5
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
  mpirun -np 2 "$BUILD/bin/collective_perf" -c all_gather --sizes 8 -n 1 --no-membw -q -o "$COLL_REAL" >/dev/null 2>&1
t=$W/results/default/collective_N1_t2_c1_j85.h5
expect "a collective job: OK with the trace named after its point" 0 "scaleprobe-job: OK $t\$" \
  env PATH="$W/launch:$PATH" FAKE_LOG="$W/fake.log" SLURM_JOB_NUM_NODES=1 SLURM_NTASKS=2 SLURM_NTASKS_PER_NODE=2 \
  SLURM_JOB_NODELIST=n1 SLURM_JOB_ID=85 FAKE_TRACE="$COLL_REAL" bash "$ROOT/jobs/collective.sbatch" -c all_gather --sizes 8
expect "collective: the binary gets its arguments and --scaling strong" 0 "^binary: [^ ]*/bin/collective_perf -c all_gather --sizes 8 --scaling strong -o $t\$" cat "$W/fake.log"
expect "an unknown backend is refused" 2 "SCALEPROBE_BACKEND=tcp: use mpi, gloo or nccl" \
  "${one[@]}" SLURM_JOB_ID=78 SCALEPROBE_BACKEND=tcp bash "$AR" --sizes 8
expect "nccl without GPUs is refused" 2 "SCALEPROBE_BACKEND=nccl needs GPUs: --gpus-per-node N" \
  "${one[@]}" SLURM_JOB_ID=78 SCALEPROBE_BACKEND=nccl bash "$AR" --sizes 8
expect "gloo with GPUs is refused" 2 "SCALEPROBE_BACKEND=gloo with 1 GPUs per node: a GPU run is on nccl" \
  "${one[@]}" SLURM_JOB_ID=78 SCALEPROBE_BACKEND=gloo SCALEPROBE_GPUS_PER_NODE=1 bash "$AR" --sizes 8
# GPUs: the same binary on --backend nccl, the point named _g<N> (no _nccl). Where the build has no
# NCCL transport the job stops first, naming what is missing.
t=$W/results/default/allreduce_N1_t1_c1_g1_j82.h5
if "$BUILD/collectives/allreduce_perf" --help 2>/dev/null | grep -q 'nccl:'; then
  expect "GPU job: OK, named _g1" 0 "scaleprobe-job: OK $t\$" \
    "${one[@]}" SLURM_JOB_ID=82 FAKE_TRACE="$REAL" SCALEPROBE_GPUS_PER_NODE=1 bash "$AR" --sizes 8
  expect "GPU job: the binary gets --backend nccl" 0 "^binary: [^ ]*/bin/allreduce_perf --sizes 8 --scaling strong --backend nccl -o $t\$" cat "$W/fake.log"
else
  expect "GPU job: the missing NCCL backend is named" 2 'runs allreduce on --backend nccl, which .*allreduce_perf does not offer' \
    "${one[@]}" SLURM_JOB_ID=82 FAKE_TRACE="$REAL" SCALEPROBE_GPUS_PER_NODE=1 bash "$AR" --sizes 8
fi
t=$W/results/default/bucket_sweep_N1_t1_c1_weak_mpirun_j81.h5
expect "weak bucket_sweep with a built-in layout runs (mpirun)" 0 "scaleprobe-job: OK $t\$" \
  "${one[@]}" SLURM_JOB_ID=81 FAKE_TRACE="$REAL" SCALEPROBE_SCALING=weak SCALEPROBE_LAUNCHER=mpirun bash "$ROOT/jobs/bucket_sweep.sbatch" --layout resnet50
expect "mpirun: the binary gets --layout resnet50 --scaling weak" 0 '^binary: [^ ]*/bin/bucket_sweep --layout resnet50 --scaling weak -o ' cat "$W/fake.log"
expect "mpirun passes the SCALEPROBE_* provenance on (-x)" 0 '^launcher: mpirun .*-x SCALEPROBE_PASS .*-x SCALEPROBE_POINT' cat "$W/fake.log"
# The launcher follows the site: srun without --mpi unless a plugin is set; mpirun's flags by flavor.
expect "srun job without a plugin set runs" 0 "scaleprobe-job: OK " "${one[@]}" SCALEPROBE_CAMPAIGN=launchers SLURM_JOB_ID=82 FAKE_TRACE="$REAL" bash "$AR" --sizes 8
expect "no --mpi given to srun: the site's MpiDefault" 0 '^launcher: srun --export=ALL --nodes=1 --ntasks=1 --ntasks-per-node=1 --cpus-per-task=1 --kill-on-bad-exit=1 /[^ ]*/allreduce_perf ' \
  grep '^launcher:' "$W/fake.log"
expect "srun job with SCALEPROBE_SRUN_MPI=pmix runs" 0 "scaleprobe-job: OK " "${one[@]}" SCALEPROBE_CAMPAIGN=launchers SLURM_JOB_ID=83 SCALEPROBE_SRUN_MPI=pmix FAKE_TRACE="$REAL" bash "$AR" --sizes 8
expect "SCALEPROBE_SRUN_MPI=pmix: srun --mpi=pmix" 0 '^launcher: srun .* --mpi=pmix /[^ ]*/allreduce_perf ' grep '^launcher:' "$W/fake.log"
expect "MPICH/Hydra mpirun job runs" 0 "scaleprobe-job: OK " "${one[@]}" SCALEPROBE_CAMPAIGN=launchers SLURM_JOB_ID=84 SCALEPROBE_LAUNCHER=mpirun \
  FAKE_MPIRUN_VERSION="HYDRA build details:" FAKE_TRACE="$REAL" bash "$AR" --sizes 8
expect "MPICH/Hydra (from mpirun --version): -n, -ppn, -bind-to core:C, -genvlist with the provenance" 0 \
  '^launcher: mpirun -n 1 -ppn 1 -bind-to core:1 -genvlist OMP_NUM_THREADS,OMP_PROC_BIND,OMP_PLACES,OPENBLAS_NUM_THREADS,.*SCALEPROBE_POINT' \
  grep '^launcher:' "$W/fake.log"
expect "an unrecognised mpirun: one line naming the fix, exit 2" 2 '^scaleprobe-job: error: .*set SCALEPROBE_MPIRUN_FLAVOR=openmpi\|mpich$' \
  "${one[@]}" SCALEPROBE_CAMPAIGN=launchers SLURM_JOB_ID=85 SCALEPROBE_LAUNCHER=mpirun FAKE_MPIRUN_VERSION="some other mpirun" FAKE_TRACE="$REAL" bash "$AR" --sizes 8
t=$W/results/default/allreduce_N1_t1_c1_p3_j90_1.h5
expect "array task: point and pass from SCALEPROBE_ARRAY_POINTS (NxTxCpK)" 0 "scaleprobe-job: OK $t\$" \
  "${one[@]}" SLURM_JOB_ID=91 SLURM_ARRAY_JOB_ID=90 SLURM_ARRAY_TASK_ID=1 SCALEPROBE_ARRAY_POINTS=1x1x1:1x1x1p3 \
  SCALEPROBE_PASS=7 FAKE_TRACE="$REAL" bash "$AR"
grep -qx SCALEPROBE_PASS=3 "$W/fake.log" && grep -qx SCALEPROBE_POINT=allreduce_N1_t1_c1 "$W/fake.log" &&
  ok "array task: SCALEPROBE_PASS=3 from its entry" || no "array task env: $(cat "$W/fake.log")"
expect "array task: a bad entry is refused" 2 'no point for array task 1' \
  "${one[@]}" SLURM_JOB_ID=93 SLURM_ARRAY_JOB_ID=92 SLURM_ARRAY_TASK_ID=1 SCALEPROBE_ARRAY_POINTS=1x1x1:1x1x1q3 bash "$AR"
expect "strong trainer without -B: the binary gets --scaling strong" 1 'gpt_train exited with 1' \
  "${one[@]}" SLURM_JOB_ID=82 bash "$GPT" -s 5
ck=$W/results/default/checkpoints
expect "trainer: --scaling strong and the point's checkpoint" 0 "^binary: [^ ]*/bin/gpt_train -s 5 --scaling strong --save $ck/gpt_train_N1_t1_c1.h5 -o " cat "$W/fake.log"
"${one[@]}" SLURM_JOB_ID=83 SCALEPROBE_PASS=2 SCALEPROBE_SCALING=weak bash "$GPT" -B 4 >/dev/null 2>&1
expect "trainer pass 2: its own checkpoint (-B passed unchanged)" 0 "^binary: [^ ]*/gpt_train -B 4 --scaling weak --save $ck/gpt_train_N1_t1_c1_weak_p2.h5 -o [^ ]*_weak_p2_j83.h5\$" cat "$W/fake.log"

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

# --- submitter: refusals and dry runs (no SLURM needed) ---
expect_error "submitter: --bench required" '--bench is required' "$SUB" --dry-run
expect_error "submitter: bad list" "--tasks-per-node 1,x: 'x' is not a positive integer" "$SUB" --bench allreduce --tasks-per-node 1,x --dry-run
expect_error "submitter: unknown option" 'unknown option --nodez' "$SUB" --bench allreduce --nodez 1
expect_error "submitter: a missing value" '--time needs a value' "$SUB" --bench allreduce --time
expect_error "submitter: bad --repeat" '--repeat 0: not a positive number of passes' "$SUB" --bench allreduce --repeat 0 --dry-run
expect_error "submitter: GPU run of a trainer refused (no --backend nccl)" 'runs gpt_train on --backend nccl, which .* does not offer' "$SUB" --bench gpt_train --gpus-per-node 2
expect_error "submitter: -o refused" 'do not pass -o: the job script names the trace' "$SUB" --bench allreduce --dry-run -- -o x.h5
expect_error "submitter: --scaling in the arguments refused" 'do not pass --scaling=weak' "$SUB" --bench allreduce --dry-run -- --scaling=weak
expect_error "submitter: trainer --global-batch refused" 'do not pass --global-batch' "$SUB" --bench gpt_train --dry-run -- --global-batch 8
expect_error "submitter: trainer --save refused" 'do not pass --save: the job script manages the checkpoint' "$SUB" --bench resnet_train --dry-run -- --save c.h5
expect_error "submitter: --requeue only for trainers" '--requeue is for trainer jobs' "$SUB" --bench allreduce --requeue --dry-run
expect_error "submitter: a point listed twice" 'point allreduce_N1_t1_c1 is listed twice' "$SUB" --bench allreduce --nodes 1,1 --dry-run
expect "trainer dry run: the warning signal, -B passed unchanged" 0 'sbatch .*--signal=B:USR1@120 .*jobs/gpt_train.sbatch -B 8 -s 5$' \
  "$SUB" --bench gpt_train --nodes 2 --dry-run -- -B 8 -s 5
expect "strong trainer without -B is accepted" 0 'jobs/resnet_train.sbatch -s 5$' "$SUB" --bench resnet_train --dry-run -- -s 5
expect "weak bucket_sweep with a built-in layout is accepted" 0 'SCALEPROBE_SCALING=weak.* [^ ]*/jobs/bucket_sweep.sbatch --layout resnet50$' \
  "$SUB" --bench bucket_sweep --scaling weak --dry-run -- --layout resnet50
out=$("$SUB" --bench allreduce --campaign c1 --nodes 1,2 --tasks-per-node 1,2 --cpus-per-task 2 --time 7 --partition p1 --account a1 \
      --qos q1 --sbatch-opt=--exclusive --analysis --dry-run -- --sizes 8,1K -a ring 2>&1)
if [ "$(grep -c '^sbatch .*allreduce.sbatch' <<<"$out")" = 4 ] &&
   grep -q -- '^sbatch --parsable --job-name=sp-allreduce-N2t2c2 --nodes=2 --ntasks-per-node=2 --cpus-per-task=2 --time=7 --partition=p1 --account=a1 --qos=q1 --exclusive --output=[^ ]*/c1/logs/allreduce_N2_t2_c2_j%j.out --export=ALL,SCALEPROBE_ROOT=[^ ]*,SCALEPROBE_CAMPAIGN=c1,'"$DEFAULT_EXPORTS"' [^ ]*/jobs/allreduce.sbatch --sizes 8,1K -a ring$' <<<"$out" &&
   grep -q -- "^sbatch --parsable --job-name=sp-report --ntasks=1 --time=7 --partition=p1 --account=a1 --qos=q1 --exclusive '--dependency=afterany:<job ids of the jobs above>' .*jobs/report.sbatch$" <<<"$out" &&
   grep -q '^# dry run: 4 point(s) to run; nothing submitted, nothing written$' <<<"$out" &&
   [ ! -e "$W/results/c1" ]; then ok "dry run: grid lines, sbatch options, afterany report line, nothing written"
else no "dry run lines: $out"; fi
out=$("$SUB" --bench allreduce --nodes 2 --dry-run 2>&1)
grep -q -- '^sbatch .* --exclusive --output=.*allreduce.sbatch$' <<<"$out" && ! grep -q SCALEPROBE_SRUN_MPI <<<"$out" &&
  ok "benchmark jobs are exclusive by default; no srun plugin forced" || no "default exclusive: $out"
out=$("$SUB" --bench allreduce --nodes 2 --shared --srun-mpi pmix --analysis --dry-run 2>&1)
! grep -q -- '--exclusive' <<<"$out" && grep -q 'SCALEPROBE_SRUN_MPI=pmix ' <<<"$out" &&
  ok "--shared: no --exclusive; --srun-mpi exported" || no "--shared: $out"
out=$("$SUB" --bench allreduce --nodes 2 --tasks-per-node 4 --gpus-per-node 4 --launcher mpirun --dry-run 2>&1)
grep -q -- '--gpus-per-node=4 .*SCALEPROBE_GPUS_PER_NODE=4,.*SCALEPROBE_LAUNCHER=mpirun,SCALEPROBE_BACKEND=nccl[, ]' <<<"$out" && grep -q 'allreduce_N2_t4_c1_g4_mpirun_j%j.out' <<<"$out" &&
  ok "dry run: GPU option wired through" || no "dry run GPU: $out"
out=$("$SUB" --bench allreduce --simulate flat --nodes 4 --tasks-per-node 16 --dry-run 2>&1)
grep -q -- '^sbatch --parsable --job-name=sp-allreduce-N4t16c1_sim-flat --nodes=1 --ntasks-per-node=1 --cpus-per-task=1 --time=00:10:00 --output=[^ ]*/allreduce_N4_t16_c1_sim-flat_j%j.out .*SCALEPROBE_SIMULATE=flat,SCALEPROBE_SIM_BUILD_DIR=[^ ]*,SCALEPROBE_SIM_POINT=4x16x1 ' <<<"$out" &&
  ok "dry run: a simulated point is a one-task, shared job carrying its point" || no "dry run simulate: $out"
expect_error "submitter: a simulated trainer refused" 'simulate is for allreduce' "$SUB" --bench gpt_train --simulate flat
out=$("$SUB" --bench bucket_sweep --nodes 1,2 --tasks-per-node 1,4 --cpus-per-task 1,2 --array-mode --dry-run -- --layout resnet50 2>&1)
grep -q -- '--array=0-7 --nodes=2 --ntasks-per-node=4 --cpus-per-task=2 .*SCALEPROBE_ARRAY_POINTS=1x1x1:1x1x2:1x4x1:1x4x2:2x1x1:2x1x2:2x4x1:2x4x2 ' <<<"$out" &&
  ok "dry run: one array sized to the largest point" || no "dry run array: $out"
out=$("$SUB" --bench allreduce --tasks-per-node 1,2 --repeat 2 --dry-run 2>&1)
if [ "$(grep -c '^sbatch ' <<<"$out")" = 4 ] &&
   [ "$(grep '^sbatch ' <<<"$out" | grep -o 'logs/[^ ]*' | tr '\n' ' ')" = "logs/allreduce_N1_t1_c1_j%j.out logs/allreduce_N1_t2_c1_j%j.out logs/allreduce_N1_t1_c1_p2_j%j.out logs/allreduce_N1_t2_c1_p2_j%j.out " ] &&
   grep -q -- '--job-name=sp-allreduce-N1t2c1_p2 .*,SCALEPROBE_PASS=2 ' <<<"$out" &&
   ! grep -q -- '--job-name=sp-allreduce-N1t1c1 .*SCALEPROBE_PASS' <<<"$out"; then ok "--repeat 2: pass 1 of every point, then pass 2 (_p2, SCALEPROBE_PASS=2)"
else no "--repeat dry run: $out"; fi
out=$("$SUB" --bench allreduce --tasks-per-node 1,2 --repeat 2 --array-mode --dry-run 2>&1)
grep -q -- '--array=0-3 .*SCALEPROBE_ARRAY_POINTS=1x1x1:1x2x1:1x1x1p2:1x2x1p2 ' <<<"$out" &&
  ok "--repeat in an array: entries carry the pass" || no "--repeat array: $out"

# --- campaign files ---
C=$W/campaigns && mkdir -p "$C"
cat >"$C/two.toml" <<'EOF'
name = "files/two"
analysis = true
[defaults]
time = "00:05:00"
partition = "p1"
[[sweep]]
bench = "allreduce"
nodes = [1, 2]
scaling = ["strong", "weak"]
args = ["--sizes", "8,1K", "-a", "ring"]
[[sweep]]
bench = "bucket_sweep"
tasks_per_node = [1, 2]
array_mode = true
launcher = "mpirun"
time = 3
args = ["--layout", "resnet50"]
EOF
cat >"$C/two.json" <<'EOF'
{"name": "files/two", "analysis": true, "defaults": {"time": "00:05:00", "partition": "p1"},
 "sweep": [{"bench": "allreduce", "nodes": [1, 2], "scaling": ["strong", "weak"], "args": ["--sizes", "8,1K", "-a", "ring"]},
           {"bench": "bucket_sweep", "tasks_per_node": [1, 2], "array_mode": true, "launcher": "mpirun", "time": 3,
            "args": ["--layout", "resnet50"]}]}
EOF
out=$("$SUB" --file "$C/two.toml" --dry-run 2>&1)
lines=$(grep '^sbatch ' <<<"$out" | grep -o -- '--job-name=[^ ]*' | tr '\n' ' ')
if [ "$lines" = "--job-name=sp-allreduce-N1t1c1 --job-name=sp-allreduce-N2t1c1 --job-name=sp-allreduce-N1t1c1_weak --job-name=sp-allreduce-N2t1c1_weak --job-name=sp-bucket_sweep-array_mpirun --job-name=sp-report " ] &&
   grep -q -- '^sbatch --parsable --job-name=sp-allreduce-N2t1c1_weak --nodes=2 .*--time=00:05:00 --partition=p1 --exclusive --output=[^ ]*/files/two/logs/allreduce_N2_t1_c1_weak_j%j.out .*SCALEPROBE_SCALING=weak,.* [^ ]*/jobs/allreduce.sbatch --sizes 8,1K -a ring$' <<<"$out" &&
   grep -q -- '--array=0-1 --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --time=3 --partition=p1 .*SCALEPROBE_LAUNCHER=mpirun,.*SCALEPROBE_ARRAY_POINTS=1x1x1:1x2x1 [^ ]*/jobs/bucket_sweep.sbatch --layout resnet50$' <<<"$out" &&
   grep -q -- "--job-name=sp-report --ntasks=1 --time=00:05:00 --partition=p1 '--dependency=afterany:<job ids of the jobs above>'" <<<"$out" &&
   grep -q '^# dry run: 6 point(s) to run' <<<"$out" && [ ! -e "$W/results/files" ]; then ok "campaign file: expansion in order, defaults, per-sweep time, array, report"
else no "campaign file dry run: $out"; fi
[ "$out" = "$("$SUB" --file "$C/two.json" --dry-run 2>&1)" ] && ok "the same campaign as JSON gives the same lines" || no "TOML and JSON differ"
out=$("$SUB" --file "$C/two.toml" --campaign other --time 9 --nodes 4 --dry-run 2>&1)
[ "$(grep -c -- '^sbatch .*--nodes=4 .*--time=9 --partition=p1 --exclusive --output=[^ ]*/other/logs/' <<<"$out")" = 3 ] &&
  grep -q -- '--job-name=sp-report --ntasks=1 --time=9 ' <<<"$out" &&
  ok "flags beside --file override the file (campaign, time, nodes)" || no "overrides: $out"
bad_file() {  # bad_file NAME PATTERN TOML-TEXT: the file is refused with one line naming it
  printf '%s\n' "$3" >"$C/bad.toml"
  expect_error "$1" "$C/bad.toml: $2" "$SUB" --file "$C/bad.toml" --dry-run
}
bad_file "campaign file: unknown sweep key" "sweep\[2\]: unknown key 'nodez'" $'name = "b"\n[[sweep]]\nbench = "allreduce"\n[[sweep]]\nbench = "allreduce"\nnodez = 2'
bad_file "campaign file: unknown top-level key" "unknown key 'sweeps'" $'name = "b"\n[[sweeps]]\nbench = "allreduce"'
bad_file "campaign file: bad scaling" 'sweep\[1\]\.scaling = "medium": use strong or weak' $'name = "b"\n[[sweep]]\nbench = "allreduce"\nscaling = "medium"'
bad_file "campaign file: wrong type" 'sweep\[1\]\.nodes = "1,2": expected a positive integer or a list of them' $'name = "b"\n[[sweep]]\nbench = "allreduce"\nnodes = "1,2"'
bad_file "campaign file: a boolean is not a count" 'sweep\[1\]\.repeat = true: not a positive number of passes' $'name = "b"\n[[sweep]]\nbench = "allreduce"\nrepeat = true'
bad_file "campaign file: bad default" 'defaults\.time = "1h": use minutes' $'name = "b"\n[defaults]\ntime = "1h"\n[[sweep]]\nbench = "allreduce"'
bad_file "campaign file: bench required" 'sweep\[1\]: bench is required' $'name = "b"\n[[sweep]]\nnodes = 2'
bad_file "campaign file: name required" 'name is required' $'[[sweep]]\nbench = "allreduce"'
bad_file "campaign file: bad args" "sweep\[1\]\.args: do not pass -o" $'name = "b"\n[[sweep]]\nbench = "allreduce"\nargs = ["-o", "x.h5"]'
bad_file "campaign file: requeue on a collective" 'sweep\[1\]\.requeue = true: requeue is for trainer jobs' $'name = "b"\n[[sweep]]\nbench = "allreduce"\nrequeue = true'
bad_file "campaign file: one point in two sweeps" 'sweep\[1\] and sweep\[2\] both list point allreduce_N2_t1_c1' $'name = "b"\n[[sweep]]\nbench = "allreduce"\nnodes = [1, 2]\n[[sweep]]\nbench = "allreduce"\nnodes = 2'
bad_file "campaign file: not TOML" 'not valid TOML' $'name = "b"\n[[sweep]\nbench = "allreduce"'
expect_error "campaign file: --bench beside --file refused" '--bench cannot be combined with --file' "$SUB" --file "$C/two.toml" --bench allreduce --dry-run
expect_error "campaign file: missing file" "--file $C/none.toml: no such file" "$SUB" --file "$C/none.toml"
expect "the example campaign expands" 0 '^# dry run: [0-9]+ point\(s\) to run' "$SUB" --file "$ROOT/jobs/campaigns/example.toml" --dry-run

# --- resume in a dry run: a valid trace under the point's name is skipped ---
mkdir -p "$W/results/r"
cp "$REAL" "$W/results/r/allreduce_N1_t1_c1_j3.h5"
echo partial >"$W/results/r/allreduce_N1_t2_c1_j4.h5.partial"
out=$("$SUB" --bench allreduce --campaign r --tasks-per-node 1,2 --dry-run 2>&1)
grep -q '^# skip allreduce_N1_t1_c1: complete' <<<"$out" && [ "$(grep -c '^sbatch ' <<<"$out")" = 1 ] &&
  grep -q 'would rename .*allreduce_N1_t2_c1_j4.h5.partial' <<<"$out" && [ -e "$W/results/r/allreduce_N1_t2_c1_j4.h5.partial" ] &&
  [ ! -e "$W/results/r/manifest.tsv" ] && [ ! -e "$W/results/r/campaign.json" ] &&
  ok "dry-run resume: complete point skipped, stale partial reported, not touched" || no "dry-run resume: $out"

# --- resume per (point, pass), for real, with a fake sbatch and squeue ---
mkdir -p "$W/slurm"
cat >"$W/slurm/sbatch" <<'FAKE'
#!/bin/bash
# fake sbatch: job ids 101, 102, ... (counter in $FAKE_SLURM/next); logs its arguments and
# whether SCALEPROBE_PASS came from the caller's environment
d=$FAKE_SLURM; id=$(cat "$d/next" 2>/dev/null || echo 101); echo $((id + 1)) >"$d/next"
echo "$id $* env_pass=${SCALEPROBE_PASS:-none}" >>"$d/sbatch.log"
echo "$id"
FAKE
cat >"$W/slurm/squeue" <<'FAKE'
#!/bin/bash
# fake squeue: the ids in $FAKE_SLURM/queue are pending or running
cat "$FAKE_SLURM/queue" 2>/dev/null; exit 0
FAKE
chmod +x "$W/slurm/sbatch" "$W/slurm/squeue"
export FAKE_SLURM=$W/slurm
# shellcheck disable=SC2054  # the commas are values (--tasks-per-node 1,2)
S=(env PATH="$W/slurm:$PATH" SCALEPROBE_PASS=9 "$SUB" --bench allreduce --campaign rs --tasks-per-node 1,2 --repeat 2 --analysis -- --sizes 8)
RS=$W/results/rs
out=$("${S[@]}" 2>&1); rc=$?
# col NAME [MANIFEST]: the column's values, one line
col() { awk -F'\t' -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next } { print $k }' "${2:-$RS/manifest.tsv}" | tr '\n' ' '; }
if [ "$rc" = 0 ] && [ "$(grep -c '^#   -> job ' <<<"$out")" = 5 ] &&
   [ "$(head -1 "$RS/manifest.tsv")" = "$MANIFEST_HEADER" ] &&
   [ "$(col pass)" = "1 1 2 2  " ] && [ "$(col status)" = "submitted submitted submitted submitted report " ] &&
   [ "$(col job_id)" = "101 102 103 104 105 " ] &&
   [ "$(col trace | cut -d' ' -f4)" = "$RS/allreduce_N1_t2_c1_p2_j104.h5" ] &&
   grep -q '^105 .*--dependency=afterany:101:102:103:104 ' "$FAKE_SLURM/sbatch.log" &&
   ! grep -q 'env_pass=9' "$FAKE_SLURM/sbatch.log" && [ -d "$RS/logs" ] &&
   /usr/bin/python3 -c 'import json,sys; h=json.load(open(sys.argv[1])); assert len(h)==1 and h[0]["campaign"]["sweeps"][0]["repeat"]==2 and "--repeat 2" in h[0]["command"]' "$RS/campaign.json"
then ok "submission: 4 (point, pass) jobs, manifest with pass, afterany report on all, campaign.json"
else no "submission (exit $rc): $out; manifest: $(cat "$RS/manifest.tsv" 2>/dev/null); sbatch: $(cat "$FAKE_SLURM/sbatch.log")"; fi
# 101 (N1 t1 pass 1) finished, 104 (N1 t2 pass 2) still queued, 103 (N1 t1 pass 2) killed with a
# partial trace, 102 (N1 t2 pass 1) failed without a trace.
cp "$REAL" "$RS/allreduce_N1_t1_c1_j101.h5"
echo partial >"$RS/allreduce_N1_t1_c1_p2_j103.h5.partial"
echo 104 >"$FAKE_SLURM/queue"
out=$("${S[@]}" 2>&1); rc=$?
if [ "$rc" = 0 ] && grep -q "^# skip allreduce_N1_t1_c1: complete ($RS/allreduce_N1_t1_c1_j101.h5)\$" <<<"$out" &&
   grep -q '^# skip allreduce_N1_t2_c1_p2: job 104 is still queued or running$' <<<"$out" &&
   grep -q "^# renamed $RS/allreduce_N1_t1_c1_p2_j103.h5.partial to $RS/allreduce_N1_t1_c1_p2_j103.h5.partial.failed\$" <<<"$out" &&
   [ "$(grep '^sbatch ' <<<"$out" | grep -o -- '--job-name=[^ ]*' | tr '\n' ' ')" = "--job-name=sp-allreduce-N1t2c1 --job-name=sp-allreduce-N1t1c1_p2 --job-name=sp-report " ] &&
   grep -q '^108 .*--dependency=afterany:104:106:107 ' "$FAKE_SLURM/sbatch.log" &&
   [ "$(col status | cut -d' ' -f6-)" = "complete queued submitted submitted report " ] &&
   [ "$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$RS/campaign.json")" = 2 ]
then ok "resume per (point, pass): complete and queued skipped, partial renamed, the rest resubmitted"
else no "resume (exit $rc): $out; manifest: $(cat "$RS/manifest.tsv")"; fi
# A manifest written by the bash submitter (no pass or backend column): still read; rewritten with
# the pass and backend columns (pass 1, backend mpi) before the first new line is appended.
OLD=$W/results/old && mkdir -p "$OLD"
printf 'submitted_utc\tbenchmark\tnodes\ttasks_per_node\tcpus_per_task\tgpus_per_node\tscaling\tlauncher\tstatus\tjob_id\ttrace\tlog\tsbatch_command\n' >"$OLD/manifest.tsv"
printf '2026-01-01T00:00:00Z\tallreduce\t1\t1\t1\t0\tstrong\tsrun\tsubmitted\t50\t%s\t%s\tsbatch x\n' "$OLD/allreduce_N1_t1_c1_j50.h5" "$OLD/logs/x.out" >>"$OLD/manifest.tsv"
echo 50 >"$FAKE_SLURM/queue"
out=$(env PATH="$W/slurm:$PATH" "$SUB" --bench allreduce --campaign old --tasks-per-node 1,2 --dry-run 2>&1)
grep -q '^# skip allreduce_N1_t1_c1: job 50 is still queued or running$' <<<"$out" && [ "$(grep -c '^sbatch ' <<<"$out")" = 1 ] &&
  [ "$(wc -l <"$OLD/manifest.tsv")" = 2 ] && ok "old manifest read in a dry run (queued point skipped), not rewritten" || no "old manifest dry run: $out"
out=$(env PATH="$W/slurm:$PATH" "$SUB" --bench allreduce --campaign old --tasks-per-node 1,2 2>&1)
if grep -q '^# skip allreduce_N1_t1_c1: job 50 is still queued' <<<"$out" && [ "$(head -1 "$OLD/manifest.tsv")" = "$MANIFEST_HEADER" ] &&
   [ "$(col backend "$OLD/manifest.tsv" | cut -d' ' -f1) $(col pass "$OLD/manifest.tsv" | cut -d' ' -f1)" = "mpi 1" ] &&
   [ "$(col status "$OLD/manifest.tsv" | cut -d' ' -f1) $(col job_id "$OLD/manifest.tsv" | cut -d' ' -f1)" = "submitted 50" ] &&
   [ "$(awk -F'\t' '{ print NF }' "$OLD/manifest.tsv" | sort -u)" = "$(awk -F'\t' '{ print NF }' <<<"$MANIFEST_HEADER")" ] &&
   [ "$(wc -l <"$OLD/manifest.tsv")" = 4 ]
then ok "old manifest converted to the pass and backend columns, then appended to"
else no "old manifest: $out; $(cat "$OLD/manifest.tsv")"; fi
cat >"$W/slurm/sbatch" <<'FAKE'
#!/bin/bash
echo "sbatch: error: Batch job submission failed: Invalid account" >&2; exit 1
FAKE
expect "a failing sbatch: its message, then the error line, exit 2" 2 '^submit-sweep: error: sbatch failed \(see its message above\)$' \
  env PATH="$W/slurm:$PATH" "$SUB" --bench allreduce --campaign f --tasks-per-node 3

echo "$((n - bad))/$n passed"
[ "$bad" = 0 ]
