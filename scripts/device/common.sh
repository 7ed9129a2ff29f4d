# Sourced by the node scripts (node-shm.sh, node-extras.sh, node-pipeline.sh) after they set t0 and OUT:
# el (a line with the seconds since t0), the repository as the working directory, the programs
# (SP_BIN, or the bundle's .device/env.sh: ../shared/device/make-bundle.sh), n = the machine's
# CPUs, and one rank = one thread as root under Open MPI.
# shellcheck shell=bash disable=SC2154,SC2034  # t0 comes from, n goes to, the sourcing script
el() { echo "[t+$(( $(date +%s) - t0 ))s] $*"; }
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 2
if [ -z "${SP_BIN:-}" ]; then
  dev=${SP_DEVICE:-$repo/.device}
  [ -f "$dev/env.sh" ] || { el "error: no SP_BIN and no $dev/env.sh (make one with ../shared/device/make-bundle.sh)"; exit 2; }
  # shellcheck source=/dev/null
  source "$dev/env.sh" || { el "error: $dev/env.sh failed"; exit 2; }
fi
n=$(OMP_NUM_THREADS='' OMP_THREAD_LIMIT='' nproc)  # GNU nproc reports OMP_NUM_THREADS when set
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# node_output NAME: the runs' folder $OUT/NAME/raw (as raw), the script's output also in
# $OUT/NAME.log, and $OUT/NAME/node.txt: the date, the CPUs, lscpu and the MPI.
node_output() {
  raw=$OUT/$1/raw
  mkdir -p "$raw"
  exec > >(tee -a "$OUT/$1.log") 2>&1
  # The single-copy lines say whether Open MPI's shared memory moves a large message in one copy
  # (CMA, which a Yama ptrace_scope above 0 turns off) or in fragments that need both sides' calls.
  { date -u; echo "nproc $n"; lscpu; mpirun --version | head -1
    echo "yama ptrace_scope: $(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo absent)"
    ompi_info --param btl vader --level 9 2>/dev/null | grep single_copy_mechanism; } >"$OUT/$1/node.txt" 2>&1
}
