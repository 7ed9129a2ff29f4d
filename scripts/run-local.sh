#!/usr/bin/env bash
# The main local job: install what is missing, build, and run a small campaign on this machine
# (allreduce sweep + DDP bucket sweep on 2 ranks), ending in a report.
#   scripts/run-local.sh [campaign-dir]      (default results/local/<UTC time>)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release

NP=${SCALEPROBE_NP:-2}
campaign=${1:-results/local/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$campaign"
bin=build/release/collectives
launch=(mpirun -np "$NP")
if mpirun --version 2>/dev/null | grep -q "Open MPI"; then
  launch+=(--oversubscribe)
  [ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_mpi_yield_when_idle=1
fi
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

echo "== allreduce sweep: every algorithm vs MPI_Allreduce, 8 B .. 16 MiB, $NP ranks"
"${launch[@]}" $bin/allreduce_perf -b 8 -e 16M -f 8 -a all -o "$campaign/allreduce.h5"
echo "== bucket sweep: resnet50 gradient layout, DDP bucket caps, $NP ranks"
"${launch[@]}" $bin/bucket_sweep --layout resnet50 -c tensor,1,5,25,100,all -a ring,mpi -n 5 -o "$campaign/bucket_sweep.h5"
echo "== report"
analysis/scaleprobe-analyze report "$campaign" -o "$campaign/report"
echo
echo "traces: $campaign/allreduce.h5 $campaign/bucket_sweep.h5"
echo "report: $campaign/report/report.md"
