#!/usr/bin/env bash
# CTest slurm_jobs_offline (label slurm): the job scripts' logic that needs no SLURM daemons. A
# fake `srun`/`mpirun` (the launcher inside a job) on PATH stands in for SLURM: refusals (outside
# an allocation, uneven tasks, world-size mismatch, GPU path, bad settings, arguments the job
# owns), what the binary gets (--scaling, the trace name with its pass, SCALEPROBE_* provenance),
# the launcher per site and MPI flavour, array points with passes, trainer checkpoints per pass, a
# job killed at its time limit. The submitter's side: test_submit_offline.sh.
#   tests/slurm/test_jobs_offline.sh [BUILD_DIR]
set -uo pipefail
# shellcheck source=offline_lib.sh
source "$(dirname "$0")/offline_lib.sh"

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

offline_done
