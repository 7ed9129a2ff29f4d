# shellcheck shell=bash
# jobs/lib/common.sh: the shared part of scaleprobe's SLURM job scripts (jobs/*.sbatch). Sourcing
# it only defines SP_ROOT and sp_* functions; nothing runs. The job scripts call sp_job_main (one
# benchmark run) or sp_report_main. (The sweep submitter, jobs/submit-sweep, is Python:
# python/scaleprobe_sweep; it predicts the trace names given here, see naming.py there.)
#
# Settings, all optional (the job scripts read them from the environment, the submitter passes
# them on every sbatch line with --export=ALL,NAME=value,...):
#   SCALEPROBE_ROOT            repository, or <prefix>/share/scaleprobe (default: this file's ../..)
#   SCALEPROBE_BUILD_DIR       build tree or install prefix: programs are <dir>/bin/<name>
#                              (default <root>/build/release; installed: the prefix)
#   SCALEPROBE_RESULTS         results root (default <root>/results; installed: ./results of the
#                              submitting folder). Put it on scratch, not home (docs/slurm.md).
#   SCALEPROBE_CAMPAIGN        campaign folder below the results root (default: default)
#   SCALEPROBE_LAUNCHER        srun (default) or mpirun inside the allocation
#   SCALEPROBE_SRUN_MPI        srun --mpi plugin (default: none given, the site's MpiDefault)
#   SCALEPROBE_MPIRUN_FLAVOR   openmpi or mpich (MPICH/Hydra and its derivatives); default: from
#                              `mpirun --version`
#   SCALEPROBE_SRUN_FLAGS      extra srun flags, word-split (e.g. "--cpu-bind=cores")
#   SCALEPROBE_MPIRUN_FLAGS    extra mpirun flags, word-split (e.g. "--bind-to core")
#   SCALEPROBE_SCALING         strong (default) or weak, passed to the binary as --scaling (docs/slurm.md)
#   SCALEPROBE_BACKEND         mpi (default) or gloo, passed to the binary as --backend unless mpi
#   SCALEPROBE_GPUS_PER_NODE   0 (default: CPU path) or N > 0: the NCCL binaries (not in this version)
#   SCALEPROBE_ARGS            benchmark arguments when the script gets none (word-split)
#   SCALEPROBE_SITE_ENV        site file sourced first (default <root>/jobs/site.env if present)
#   SCALEPROBE_REQUEUE         1: a trainer job stopped by its time-limit signal requeues itself
#                              (submit with --requeue); default 0: resubmit by hand to continue
#   SCALEPROBE_PASS            which repetition of the point this is (submit-sweep --repeat; default 1)
#   SCALEPROBE_ARRAY_POINTS    set by submit-sweep --array-mode: "NxTxC:NxTxCpK:..." indexed by
#                              SLURM_ARRAY_TASK_ID; the task runs that point (pass K, default 1)
#                              inside its allocation
# The job exports SCALEPROBE_POINT (its point's name) and SCALEPROBE_PASS, and keeps
# SCALEPROBE_CAMPAIGN, SCALEPROBE_LAUNCHER and SCALEPROBE_SCALING exported: the binaries record
# every SCALEPROBE_* variable in the trace's /provenance/env.

SP_ROOT=${SCALEPROBE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
SP_PROG=${SP_PROG:-scaleprobe-job}

sp_log()  { printf '%s: %s\n' "$SP_PROG" "$*"; }
sp_warn() { printf '%s: warning: %s\n' "$SP_PROG" "$*" >&2; }
# sp_die RC MESSAGE: exit RC (2 = bad configuration or usage, 1 = the run failed).
sp_die()  { local rc=$1; shift; printf '%s: error: %s\n' "$SP_PROG" "$*" >&2; exit "$rc"; }

# ---------------------------------------------------------------- naming (as python/scaleprobe_sweep/naming.py)

# sp_point_name BENCH NODES TASKS_PER_NODE CPUS_PER_TASK GPUS_PER_NODE SCALING LAUNCHER [BACKEND]
# e.g. allreduce_N2_t1_c1; non-default dimensions add _g<G>, _weak, _mpirun, _<backend>.
sp_point_name() {
  local name="$1_N$2_t$3_c$4"
  [ "${5:-0}" = 0 ] || name+="_g$5"
  [ "$6" = weak ] && name+=_weak
  [ "$7" = mpirun ] && name+=_mpirun
  # A GPU run (_g<N>) is on NCCL: the backend is named only otherwise.
  case ${8:-mpi} in mpi) ;; nccl) [ "${5:-0}" != 0 ] || name+=_nccl;; *) name+="_$8";; esac
  printf '%s\n' "$name"
}
# The trace: <point>_j<job>.h5 (array tasks: _j<array job>_<task>); pass k >= 2 of a point inserts
# _p<k> before _j (pass 1 keeps the name traces always had): sp_job_main's SP_STEM.

sp_is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
sp_is_posint() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }

# ---------------------------------------------------------------- settings

# Source the site file: $SCALEPROBE_SITE_ENV (must exist), else <root>/jobs/site.env if present.
sp_load_site() {
  SP_SITE_FILE=""
  if [ -n "${SCALEPROBE_SITE_ENV:-}" ]; then
    [ -f "$SCALEPROBE_SITE_ENV" ] || sp_die 2 "SCALEPROBE_SITE_ENV=$SCALEPROBE_SITE_ENV: no such file"
    SP_SITE_FILE=$SCALEPROBE_SITE_ENV
  elif [ -f "$SP_ROOT/jobs/site.env" ]; then
    SP_SITE_FILE=$SP_ROOT/jobs/site.env
  fi
  [ -n "$SP_SITE_FILE" ] || return 0
  # Site files (module load ...) are rarely written for set -eu.
  local saved=$-
  set +eu
  # shellcheck disable=SC1090
  source "$SP_SITE_FILE"
  local rc=$?
  [[ $saved == *e* ]] && set -e
  [[ $saved == *u* ]] && set -u
  [ "$rc" = 0 ] || sp_die 2 "site file $SP_SITE_FILE failed (exit $rc)"
}

# Defaults and validation of the SCALEPROBE_* settings (after the site file).
sp_settings() {
  if [ -f "$SP_ROOT/installed" ]; then  # <prefix>/share/scaleprobe (cmake --install)
    SP_BUILD=${SCALEPROBE_BUILD_DIR:-$(cd "$SP_ROOT/../.." && pwd)}
    SP_RESULTS=${SCALEPROBE_RESULTS:-${SLURM_SUBMIT_DIR:-$PWD}/results}
  else
    SP_BUILD=${SCALEPROBE_BUILD_DIR:-$SP_ROOT/build/release}
    SP_RESULTS=${SCALEPROBE_RESULTS:-$SP_ROOT/results}
  fi
  SP_CAMPAIGN=${SCALEPROBE_CAMPAIGN:-default}
  SP_LAUNCHER=${SCALEPROBE_LAUNCHER:-srun}
  SP_SRUN_MPI=${SCALEPROBE_SRUN_MPI:-}
  SP_SCALING=${SCALEPROBE_SCALING:-strong}
  SP_BACKEND=${SCALEPROBE_BACKEND:-mpi}
  local g=${SCALEPROBE_GPUS_PER_NODE:-${SLURM_GPUS_PER_NODE:-0}}
  SP_GPUS=${g##*:}                           # SLURM_GPUS_PER_NODE may read "a100:4"
  sp_check_campaign "$SP_CAMPAIGN"
  case $SP_LAUNCHER in srun|mpirun) ;; *) sp_die 2 "SCALEPROBE_LAUNCHER=$SP_LAUNCHER: use srun or mpirun";; esac
  case $SP_SCALING in strong|weak) ;; *) sp_die 2 "SCALEPROBE_SCALING=$SP_SCALING: use strong or weak";; esac
  case $SP_BACKEND in mpi|gloo|nccl) ;; *) sp_die 2 "SCALEPROBE_BACKEND=$SP_BACKEND: use mpi, gloo or nccl";; esac
  sp_is_uint "$SP_GPUS" || sp_die 2 "SCALEPROBE_GPUS_PER_NODE=$SP_GPUS: not a GPU count"
  # GPUs mean NCCL: the same binary on --backend nccl, one GPU per rank (MPI, the default, gives way).
  if [ "$SP_GPUS" -gt 0 ]; then
    [ "$SP_BACKEND" = gloo ] && sp_die 2 "SCALEPROBE_BACKEND=gloo with $SP_GPUS GPUs per node: a GPU run is on nccl"
    SP_BACKEND=nccl
  elif [ "$SP_BACKEND" = nccl ]; then
    sp_die 2 "SCALEPROBE_BACKEND=nccl needs GPUs: --gpus-per-node N"
  fi
  SP_CAMPAIGN_DIR=$SP_RESULTS/$SP_CAMPAIGN
}

# Campaign names are folder names below results/ (slashes allowed, no '..', no commas).
sp_check_campaign() {
  [[ $1 =~ ^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$ && ! $1 =~ (^|/)\.\.?(/|$) ]] ||
    sp_die 2 "campaign '$1': use letters, digits, '.', '_', '-' (and '/' for sub-folders)"
}

# ---------------------------------------------------------------- the allocation

# Sets SP_NODES, SP_TPN, SP_CPT, SP_NTASKS, SP_PASS (the point this job runs), SP_JOBTAG, SP_SUBSHAPE.
sp_geometry() {
  [ -n "${SLURM_JOB_ID:-}" ] ||
    sp_die 2 "not inside a SLURM allocation: submit with sbatch (see docs/slurm.md)"
  local nodes=${SLURM_JOB_NUM_NODES:-${SLURM_NNODES:-}} ntasks=${SLURM_NTASKS:-} tpn
  local cpt=${SLURM_CPUS_PER_TASK:-1}
  [ -n "$nodes" ] || sp_die 2 "SLURM_JOB_NUM_NODES is not set"
  [ -n "$ntasks" ] ||
    sp_die 2 "the allocation has no task count: submit with --nodes=N --ntasks-per-node=T"
  if [ -n "${SLURM_NTASKS_PER_NODE:-}" ]; then
    tpn=$SLURM_NTASKS_PER_NODE
  elif [[ ${SLURM_TASKS_PER_NODE:-} =~ ^([0-9]+)(\(x[0-9]+\))?$ ]]; then
    tpn=${BASH_REMATCH[1]}
  else
    sp_die 2 "uneven tasks per node (SLURM_TASKS_PER_NODE=${SLURM_TASKS_PER_NODE:-unset}): submit with --ntasks-per-node"
  fi
  [ "$ntasks" = $((nodes * tpn)) ] ||
    sp_die 2 "SLURM_NTASKS=$ntasks is not nodes x tasks per node ($nodes x $tpn): submit with --nodes and --ntasks-per-node"
  SP_NODES=$nodes SP_TPN=$tpn SP_CPT=$cpt SP_SUBSHAPE=0 SP_PASS=${SCALEPROBE_PASS:-1}
  SP_JOBTAG=$SLURM_JOB_ID
  if [ -n "${SLURM_ARRAY_JOB_ID:-}" ]; then
    SP_JOBTAG=${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}
  fi
  if [ -n "${SCALEPROBE_ARRAY_POINTS:-}" ]; then
    # submit-sweep --array-mode: every task holds the grid's largest point and runs its own one.
    [ -n "${SLURM_ARRAY_TASK_ID:-}" ] || sp_die 2 "SCALEPROBE_ARRAY_POINTS is set but this is not an array job"
    local -a pts; IFS=: read -r -a pts <<<"$SCALEPROBE_ARRAY_POINTS"
    local p=${pts[$SLURM_ARRAY_TASK_ID]:-}
    [[ $p =~ ^([1-9][0-9]*)x([1-9][0-9]*)x([1-9][0-9]*)(p([1-9][0-9]*))?$ ]] ||
      sp_die 2 "no point for array task $SLURM_ARRAY_TASK_ID in SCALEPROBE_ARRAY_POINTS=$SCALEPROBE_ARRAY_POINTS"
    SP_NODES=${BASH_REMATCH[1]} SP_TPN=${BASH_REMATCH[2]} SP_CPT=${BASH_REMATCH[3]} SP_SUBSHAPE=1
    SP_PASS=${BASH_REMATCH[5]:-1}
    [ "$SP_NODES" -le "$nodes" ] && [ "$SP_TPN" -le "$tpn" ] && [ "$SP_CPT" -le "$cpt" ] ||
      sp_die 2 "point $p does not fit the allocation (${nodes}x${tpn}x${cpt})"
  fi
  sp_is_posint "$SP_PASS" || sp_die 2 "SCALEPROBE_PASS=$SP_PASS: not a pass number (1, 2, ...)"
  SP_NTASKS=$((SP_NODES * SP_TPN))
}

# Threads: one OpenMP (and OpenBLAS) thread per allocated CPU of the task, placed on cores.
sp_threads() {
  export OMP_NUM_THREADS=$SP_CPT OPENBLAS_NUM_THREADS=$SP_CPT
  export OMP_PROC_BIND=${OMP_PROC_BIND:-close} OMP_PLACES=${OMP_PLACES:-cores}
}

# openmpi or mpich: which mpirun is on PATH (SCALEPROBE_MPIRUN_FLAVOR overrides the guess).
sp_mpirun_flavor() {
  local flavor=${SCALEPROBE_MPIRUN_FLAVOR:-}
  if [ -z "$flavor" ]; then
    case $(mpirun --version 2>&1 | head -n 5) in
      *"Open MPI"*|*"OpenRTE"*) flavor=openmpi ;;
      *HYDRA*|*Hydra*|*"Intel(R) MPI"*|*MPICH*) flavor=mpich ;;
      *) sp_die 2 "mpirun --version names neither Open MPI nor MPICH/Hydra: set SCALEPROBE_MPIRUN_FLAVOR=openmpi|mpich" ;;
    esac
  fi
  case $flavor in openmpi|mpich) echo "$flavor" ;;
    *) sp_die 2 "SCALEPROBE_MPIRUN_FLAVOR=$flavor: use openmpi or mpich" ;; esac
}

# SP_LAUNCH: the launcher command for SP_NTASKS ranks, SP_TPN per node, SP_CPT CPUs each.
sp_launch_cmd() {
  local -a extra
  if [ "$SP_LAUNCHER" = srun ]; then
    read -r -a extra <<<"${SCALEPROBE_SRUN_FLAGS:-}"
    # 22.05's srun does not inherit --cpus-per-task from the job: always pass it.
    SP_LAUNCH=(srun --export=ALL --nodes="$SP_NODES" --ntasks="$SP_NTASKS"
               --ntasks-per-node="$SP_TPN" --cpus-per-task="$SP_CPT" --kill-on-bad-exit=1 "${extra[@]}")
  elif [ "$(sp_mpirun_flavor)" = mpich ]; then
    # MPICH's Hydra (also Intel MPI, MVAPICH): -ppn ranks per node, binding to CPT cores each,
    # the variables the ranks need passed by name (Hydra starts ranks through SLURM itself).
    read -r -a extra <<<"${SCALEPROBE_MPIRUN_FLAGS:-}"
    local vars=OMP_NUM_THREADS,OMP_PROC_BIND,OMP_PLACES,OPENBLAS_NUM_THREADS v
    for v in $(compgen -e | grep '^SCALEPROBE_' || true); do vars+=",$v"; done
    SP_LAUNCH=(mpirun -n "$SP_NTASKS" -ppn "$SP_TPN" -bind-to "core:$SP_CPT" -genvlist "$vars" "${extra[@]}")
  else
    read -r -a extra <<<"${SCALEPROBE_MPIRUN_FLAGS:-}"
    local map="ppr:$SP_TPN:node"
    [ "$SP_CPT" -gt 1 ] && map+=":PE=$SP_CPT"
    SP_LAUNCH=(mpirun -np "$SP_NTASKS" --map-by "$map"
               -x OMP_NUM_THREADS -x OMP_PROC_BIND -x OMP_PLACES -x OPENBLAS_NUM_THREADS "${extra[@]}")
    # Open MPI passes only -x variables on to remote ranks: the SCALEPROBE_* provenance too.
    local v; for v in $(compgen -e | grep '^SCALEPROBE_' || true); do SP_LAUNCH+=(-x "$v"); done
  fi
}

# ---------------------------------------------------------------- rank map

# Print the rank -> node -> core map with the same launcher and layout as the benchmark, and
# stop if the world it starts is not the allocation's.
sp_rank_map() {
  # shellcheck disable=SC2016
  local probe='r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-$SLURM_PROCID}}}
cpus=$(taskset -cp $$ 2>/dev/null) && cpus=${cpus##*: } || cpus=$(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/$$/status)
echo "rankmap rank=$r node=${SLURMD_NODENAME:-?} nodeid=${SLURM_NODEID:-?} host=$(hostname) cpus=$cpus"'
  local -a cmd=("${SP_LAUNCH[@]}")
  [ "$SP_LAUNCHER" = srun ] && cmd+=(--mpi=none)
  local out rc=0
  out=$("${cmd[@]}" bash -c "$probe" 2>&1) || rc=$?
  local map; map=$(grep '^rankmap ' <<<"$out" | sort -t= -k2,2n || true)
  echo "# rank -> node -> cores ($SP_LAUNCHER)"
  [ -z "$map" ] || printf '%s\n' "$map"
  grep -v '^rankmap ' <<<"$out" | sed 's/^/# launcher: /' || true
  [ "$rc" = 0 ] || sp_die 1 "the rank-map step ($SP_LAUNCHER) failed with exit $rc"
  local nranks ndistinct nnodes
  nranks=$(grep -c . <<<"$map" || true)
  ndistinct=$(grep -o ' rank=[0-9]*' <<<"$map" | sort -u | grep -c . || true)
  nnodes=$(grep -o ' node=[^ ]* nodeid=[^ ]*' <<<"$map" | sort -u | grep -c . || true)
  local want="the allocation (SLURM_NTASKS=$SLURM_NTASKS)"
  [ "$SP_SUBSHAPE" = 1 ] && want="this array task's point ($SP_NODES x $SP_TPN = $SP_NTASKS ranks)"
  [ "$nranks" = "$SP_NTASKS" ] && [ "$ndistinct" = "$SP_NTASKS" ] ||
    sp_die 1 "world size mismatch: $SP_LAUNCHER started $nranks ranks ($ndistinct distinct) but $want needs $SP_NTASKS; not running the benchmark"
  [ "$nnodes" = "$SP_NODES" ] ||
    sp_die 1 "node count mismatch: the ranks landed on $nnodes node(s), expected $SP_NODES"
}

# ---------------------------------------------------------------- benchmark arguments

sp_is_trainer() { case $1 in gpt_train|resnet_train) return 0;; *) return 1;; esac; }

# sp_check_args BENCH [ARGS...]: refuse the arguments the job owns. It names the trace (-o), manages
# a trainer's checkpoint (--save, --resume, --init-from) and passes the sweep's scaling itself
# (--scaling; the binaries scale weak sizes and batches, so --global-batch is refused too: -B N is
# the global batch under strong scaling and the per-rank batch under weak scaling). A scan of the
# words, not a parse; python/scaleprobe_sweep/benchargs.py does the same before submitting.
sp_check_args() {
  local bench=$1 a; shift
  for a in "$@"; do
    case $a in
      -o*|--trace|--trace=*) sp_die 2 "do not pass $a: the job script names the trace";;
      --scaling|--scaling=*)
        sp_die 2 "do not pass $a: the sweep's scaling decides (submit-sweep --scaling, SCALEPROBE_SCALING)";;
      --backend|--backend=*)
        sp_die 2 "do not pass $a: the sweep's backend decides (submit-sweep --backend, SCALEPROBE_BACKEND)";;
      --global-batch|--global-batch=*)
        sp_die 2 "do not pass $a: -B N is the global batch under strong scaling and the per-rank batch under weak scaling (submit-sweep --scaling, SCALEPROBE_SCALING)";;
    esac
    if sp_is_trainer "$bench"; then
      case $a in
        --save|--save=*|--resume|--resume=*|--init-from|--init-from=*)
          sp_die 2 "do not pass $a: the job script manages the checkpoint";;
      esac
    fi
  done
}

# ---------------------------------------------------------------- one benchmark job

# sp_job_main BENCH PROGRAM(its name in <build dir>/bin) [BENCHMARK ARGS...]
sp_job_main() {
  local bench=$1 program=$2; shift 2
  sp_load_site
  sp_settings
  sp_geometry
  sp_threads

  local bin=$SP_BUILD/bin/$program
  [ -x "$bin" ] || sp_die 2 "no $bin: build first (cmake --preset release && cmake --build --preset release) or set SCALEPROBE_BUILD_DIR"
  if [ "$SP_GPUS" -gt 0 ]; then
    # The GPU path: the same binary on --backend nccl, one GPU per rank (collectives/gpu/device.hpp).
    "$bin" --help 2>/dev/null | grep -q 'nccl:' ||
      sp_die 2 "--gpus-per-node=$SP_GPUS runs $bench on --backend nccl, which $bin does not offer (built without CUDA and NCCL, or a trainer: trainers run on the CPU); run without GPUs"
    [ "$SP_TPN" = "$SP_GPUS" ] || sp_warn "$SP_TPN tasks per node for $SP_GPUS GPUs per node (one rank per GPU is usual)"
  fi
  local check=$SP_BUILD/bin/trace_check
  [ -x "$check" ] || sp_die 2 "no $check in SCALEPROBE_BUILD_DIR=$SP_BUILD"

  local -a given=("$@")
  if [ ${#given[@]} = 0 ] && [ -n "${SCALEPROBE_ARGS:-}" ]; then read -r -a given <<<"$SCALEPROBE_ARGS"; fi
  sp_check_args "$bench" ${given[@]+"${given[@]}"}
  # The binaries scale weak sizes and batches themselves (sizes and -B per rank).
  SP_ARGS=(${given[@]+"${given[@]}"} --scaling "$SP_SCALING")
  # The backend: only when not MPI, so MPI runs keep the command lines they always had.
  [ "$SP_BACKEND" = mpi ] || SP_ARGS+=(--backend "$SP_BACKEND")
  local point; point=$(sp_point_name "$bench" "$SP_NODES" "$SP_TPN" "$SP_CPT" "$SP_GPUS" "$SP_SCALING" "$SP_LAUNCHER" "$SP_BACKEND")
  SP_STEM=$point; [ "$SP_PASS" = 1 ] || SP_STEM+=_p$SP_PASS
  SP_TRACE=$SP_CAMPAIGN_DIR/${SP_STEM}_j$SP_JOBTAG.h5
  # Provenance: the binaries record every SCALEPROBE_* variable in /provenance/env.
  export SCALEPROBE_POINT=$point SCALEPROBE_PASS=$SP_PASS SCALEPROBE_CAMPAIGN=$SP_CAMPAIGN \
         SCALEPROBE_LAUNCHER=$SP_LAUNCHER SCALEPROBE_SCALING=$SP_SCALING SCALEPROBE_BACKEND=$SP_BACKEND
  mkdir -p "$SP_CAMPAIGN_DIR"
  [ ! -e "$SP_TRACE" ] || sp_die 2 "$SP_TRACE already exists"
  sp_launch_cmd

  local launcher=$SP_LAUNCHER
  if [ "$SP_LAUNCHER" = srun ]; then launcher+=" --mpi=${SP_SRUN_MPI:-<site MpiDefault>}"
  else launcher+=" ($(sp_mpirun_flavor))"; fi
  sp_log "$bench job $SP_JOBTAG on ${SLURM_JOB_NODELIST:-?} (cluster ${SLURM_CLUSTER_NAME:-?})"
  sp_log "point: $point pass=$SP_PASS nodes=$SP_NODES tasks_per_node=$SP_TPN cpus_per_task=$SP_CPT ranks=$SP_NTASKS gpus_per_node=$SP_GPUS scaling=$SP_SCALING launcher=$launcher backend=$SP_BACKEND"
  [ "$SP_SUBSHAPE" = 0 ] || sp_log "array task $SLURM_ARRAY_TASK_ID runs its point inside a ${SLURM_JOB_NUM_NODES}x${SLURM_NTASKS_PER_NODE:-?}x${SLURM_CPUS_PER_TASK:-1} allocation"
  sp_log "threads: OMP_NUM_THREADS=$OMP_NUM_THREADS OMP_PROC_BIND=$OMP_PROC_BIND OMP_PLACES=$OMP_PLACES"
  sp_log "site file: ${SP_SITE_FILE:-none}"
  sp_log "binary: $bin ${SP_ARGS[*]}"
  sp_log "trace: $SP_TRACE"

  sp_rank_map

  local -a run=("${SP_LAUNCH[@]}")
  [ "$SP_LAUNCHER" = srun ] && [ -n "$SP_SRUN_MPI" ] && run+=(--mpi="$SP_SRUN_MPI")
  local rc=0
  if sp_is_trainer "$bench"; then
    sp_train_run "$SP_STEM" "$bin" || rc=$?
  else
    # A job killed at its time limit gets SIGTERM first: move its partial trace aside so the
    # campaign stays readable (scaleprobe-analyze refuses *.partial) and a resume reruns the point.
    trap 'sp_quarantine; sp_die 1 "terminated (time limit or scancel)"' TERM INT
    "${run[@]}" "$bin" ${SP_ARGS[@]+"${SP_ARGS[@]}"} -o "$SP_TRACE" || rc=$?
    trap - TERM INT
  fi
  if [ "$rc" != 0 ]; then
    sp_quarantine
    sp_die 1 "$bench exited with $rc (trace, if any, moved to *.failed)"
  fi
  local res
  if ! res=$("$check" "$SP_TRACE" 2>&1); then
    printf '%s\n' "$res"
    sp_quarantine
    sp_die 1 "trace_check rejected $SP_TRACE"
  fi
  printf '%s\n' "$res"
  if sp_is_trainer "$bench" && [ "$("$check" --attribute interrupted_by_signal "$SP_TRACE")" != 0 ]; then
    sp_train_interrupted
    return 0
  fi
  local n=""; [[ $res =~ ' ranks='([0-9]+) ]] && n=${BASH_REMATCH[1]}
  if [ -n "$n" ] && [ "$n" != "$SP_NTASKS" ]; then
    sp_quarantine
    sp_die 1 "the trace has $n ranks, the point $SP_NTASKS"
  fi
  sp_log "OK $SP_TRACE"
}

# ---------------------------------------------------------------- trainer jobs: time limits

# sp_train_run STEM BINARY: runs the trainer with its checkpoint at
# <campaign>/checkpoints/<stem>.h5, the point's name plus _p<k> for pass k >= 2, so every pass
# trains from scratch (resumed when present, so a resubmitted or requeued job continues). Submit with --signal=B:USR1@<seconds>: the batch shell gets USR1 before the time
# limit and forwards it to the ranks; the trainer finishes its step, checkpoints and exits 0
# (a trace with interrupted_by_signal set). SIGTERM is forwarded the same way.
sp_train_run() {
  local stem=$1 bin=$2
  SP_CKPT=$SP_CAMPAIGN_DIR/checkpoints/$stem.h5
  mkdir -p "$SP_CAMPAIGN_DIR/checkpoints"
  local -a ck=(--save "$SP_CKPT")
  if [ -f "$SP_CKPT" ]; then
    ck+=(--resume "$SP_CKPT")
    sp_log "resuming from $SP_CKPT"
  fi
  local pid rc=0
  "${run[@]}" "$bin" ${SP_ARGS[@]+"${SP_ARGS[@]}"} "${ck[@]}" -o "$SP_TRACE" &
  pid=$!
  # wait returns early when a trapped signal arrives: forward it and wait again.
  trap 'sp_log "USR1: asking the trainer to checkpoint and stop"; kill -USR1 $pid 2>/dev/null' USR1
  trap 'sp_log "TERM: asking the trainer to checkpoint and stop"; kill -TERM $pid 2>/dev/null' TERM
  while :; do
    rc=0
    wait "$pid" || rc=$?
    kill -0 "$pid" 2>/dev/null || break
  done
  trap - USR1 TERM
  return "$rc"
}

# The trainer stopped early (time limit warning) with a checkpoint: keep its trace as a segment
# (so the campaign's resume logic still sees the point as unfinished) and requeue the job when
# SCALEPROBE_REQUEUE=1 (needs sbatch --requeue), else say how to continue.
sp_train_interrupted() {
  mkdir -p "$SP_CAMPAIGN_DIR/segments"
  local seg=$SP_CAMPAIGN_DIR/segments/$(basename "$SP_TRACE" .h5)_r${SLURM_RESTART_COUNT:-0}.h5
  mv -f "$SP_TRACE" "$seg"
  sp_log "INTERRUPTED: checkpoint $SP_CKPT, trace segment $seg"
  if [ "${SCALEPROBE_REQUEUE:-0}" = 1 ]; then
    sp_log "requeueing job $SLURM_JOB_ID to continue from the checkpoint"
    scontrol requeue "$SLURM_JOB_ID" || sp_die 1 "scontrol requeue $SLURM_JOB_ID failed (submit with --requeue)"
  else
    sp_log "submit the same job again to continue from the checkpoint (or set SCALEPROBE_REQUEUE=1 and sbatch --requeue)"
  fi
}

# Move this job's trace (complete or partial) aside as *.failed.
sp_quarantine() {
  local f
  for f in "$SP_TRACE" "$SP_TRACE.partial"; do
    [ -e "$f" ] && mv -f "$f" "$f.failed" && sp_warn "moved $f to $f.failed"
  done
  return 0
}

# ---------------------------------------------------------------- the report job

sp_report_main() {
  sp_load_site
  sp_settings
  [ -d "$SP_CAMPAIGN_DIR" ] || sp_die 2 "no campaign folder $SP_CAMPAIGN_DIR"
  sp_log "report of $SP_CAMPAIGN_DIR (job ${SLURM_JOB_ID:-none})"
  "$SP_ROOT/analysis/scaleprobe-analyze" report "$SP_CAMPAIGN_DIR" "$@" ||
    sp_die 1 "scaleprobe-analyze report $SP_CAMPAIGN_DIR failed"
  sp_log "OK $SP_CAMPAIGN_DIR/report/report.md"
}
