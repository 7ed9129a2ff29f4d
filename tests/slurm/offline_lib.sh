# shellcheck shell=bash
# Sourced by tests/slurm/test_jobs_offline.sh and test_submit_offline.sh (the SLURM logic that needs
# no daemons): the build and a scratch folder, no SLURM_*/SBATCH_*/SRUN_*/SCALEPROBE_* from the
# caller, the checks' bookkeeping, the job scripts and the submitter under test, and a real 1-rank
# trace ($REAL: what a fake launcher "writes" and what a finished point looks like).
#   source offline_lib.sh [BUILD_DIR]   ...checks...   offline_done
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
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
# offline_done: the count of checks passed; the status (0 when none failed)
offline_done() {
  echo "$((n - bad))/$n passed"
  [ "$bad" = 0 ]
}

# shellcheck disable=SC2034  # AR, GPT, SUB are used by the scripts that source this file
AR=$ROOT/jobs/allreduce.sbatch GPT=$ROOT/jobs/gpt_train.sbatch SUB=$ROOT/jobs/submit-sweep
export SCALEPROBE_ROOT=$ROOT SCALEPROBE_BUILD_DIR=$BUILD SCALEPROBE_RESULTS=$W/results

REAL=$W/real.h5
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 \
  "$BUILD/collectives/allreduce_perf" --sizes 8 -n 1 -a mpi --no-membw -q -o "$REAL" >/dev/null 2>&1
"$BUILD/core/trace_check" "$REAL" >/dev/null 2>&1 || { echo "FAIL no valid trace from $BUILD/collectives/allreduce_perf"; exit 1; }
