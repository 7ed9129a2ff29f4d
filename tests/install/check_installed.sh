#!/usr/bin/env bash
# The installed tree as a site uses it (scripts/test.sh's install stage): from a folder outside the
# repository, with only <prefix>/bin on PATH,
#  1. the layout: every program and entry point in bin/, jobs and analysis under share/scaleprobe;
#  2. the installed allreduce_perf at 2 ranks, every algorithm verified, and trace_check on its trace;
#  3. a job script from share/scaleprobe/jobs: submit-sweep --dry-run names it and the prefix as the
#     build dir; then the script itself runs in a fake one-task allocation (an srun that starts the
#     task here) and writes a checked trace under ./results;
#  4. the installed scaleprobe-analyze exports and reports that campaign.
#   tests/install/check_installed.sh PREFIX
set -uo pipefail
[ $# = 1 ] || { echo "usage: check_installed.sh PREFIX" >&2; exit 2; }
PREFIX=$(realpath "$1")
TESTS_LIB=$(cd "$(dirname "$0")/../lib" && pwd)
W=$(mktemp -d /tmp/scaleprobe-installed.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W" || exit 1
fail() { echo "check_installed: FAIL: $*"; exit 1; }
export PATH="$PREFIX/bin:/usr/bin:/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
for v in $(compgen -e | grep -E '^(SLURM_|SCALEPROBE_)' || true); do unset "$v"; done

# 1. layout
for p in allreduce_perf collective_perf p2p_perf bucket_sweep trace_check gpt_train resnet_train scaleprobe-analyze submit-sweep; do
  [ -x "$PREFIX/bin/$p" ] || fail "no program $PREFIX/bin/$p"
done
for f in jobs/allreduce.sbatch jobs/report.sbatch jobs/lib/job.sh python/scaleprobe_sweep/job.py \
         python/scaleprobe_analysis/__main__.py analysis/scaleprobe-analyze installed; do
  [ -e "$PREFIX/share/scaleprobe/$f" ] || fail "no $PREFIX/share/scaleprobe/$f"
done
echo "check_installed: layout ok"

# 2. the installed benchmark
mpirun --oversubscribe -np 2 allreduce_perf --sizes 8,4K -n 3 -a all --no-membw -q -o direct.h5 >direct.log 2>&1 ||
  fail "installed allreduce_perf at 2 ranks: $(tail -3 direct.log)"
trace_check direct.h5 >/dev/null || fail "trace_check on the installed allreduce_perf's trace"
echo "check_installed: allreduce_perf (2 ranks, all algorithms verified) ok"

# 3. a job script from share/scaleprobe/jobs
dry=$(submit-sweep --bench allreduce --nodes 1,2 --dry-run -- --sizes 8 2>&1) || fail "submit-sweep --dry-run: $dry"
grep -q "$PREFIX/share/scaleprobe/jobs/allreduce.sbatch" <<<"$dry" || fail "the dry run does not submit the installed job script: $dry"
grep -q "SCALEPROBE_BUILD_DIR=$PREFIX," <<<"$dry" || fail "the dry run does not pass the prefix as the build dir: $dry"
grep -q "SCALEPROBE_RESULTS=$W/results," <<<"$dry" || fail "installed results do not default to ./results: $dry"
[ ! -e results ] || fail "the dry run wrote $W/results"
mkdir fake && ln -s "$TESTS_LIB/fake_srun" fake/srun
job=$(env PATH="$W/fake:$PATH" SLURM_JOB_ID=41 SLURM_JOB_NUM_NODES=1 SLURM_NTASKS=1 SLURM_NTASKS_PER_NODE=1 \
      SLURM_JOB_NODELIST=n1 SLURM_SUBMIT_DIR="$W" bash "$PREFIX/share/scaleprobe/jobs/allreduce.sbatch" --sizes 8,1K -n 3 2>&1) ||
  fail "the installed job script in a fake allocation: $job"
t=$W/results/default/allreduce_N1_t1_c1_j41.h5
grep -q "OK $t" <<<"$job" || fail "no 'OK $t' from the job: $job"
echo "check_installed: job script (dry run and a fake one-task allocation) ok"

# 4. the installed analysis
scaleprobe-analyze export results/default --format json >summary.json 2>export.log || fail "scaleprobe-analyze export: $(tail -3 export.log)"
/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d, "empty export"' summary.json ||
  fail "the export is not JSON"
scaleprobe-analyze report results/default -o report >report.log 2>&1 || fail "scaleprobe-analyze report: $(tail -3 report.log)"
[ -s report/report.md ] || fail "no report/report.md"
echo "check_installed: scaleprobe-analyze (export, report) ok"
echo "check_installed: PASS ($PREFIX)"
