#!/usr/bin/env bash
# The main local job: install what is missing, build, and run a small campaign on this machine
# (allreduce sweep + DDP bucket sweep on NP ranks, and data-parallel GPT training at 1 and NP
# ranks, weak scaling, two bucket caps), ending in a report with the scaling and breakdown figures.
#   scripts/run-local.sh [campaign-dir]      (default results/local/<UTC time>)
#   SCALEPROBE_NP=N: the ranks (2 to 64, default 2; more than the cores run oversubscribed)
set -euo pipefail
cd "$(dirname "$0")/.."
NP=${SCALEPROBE_NP:-2}
# Checked before the install and the build, which take minutes.
if ! [[ $NP =~ ^[0-9]+$ ]] || ((10#$NP < 2 || 10#$NP > 64)); then
  echo "run-local.sh: SCALEPROBE_NP=$NP: expected a whole number of ranks from 2 to 64" >&2
  exit 2
fi
NP=$((10#$NP))
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release

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
echo "== data-parallel training: gpt-tiny, weak scaling (4 sequences per rank), 1 and $NP ranks, caps 1 and 25 MiB"
train=build/release/trainers/gpt/gpt_train
mkdir -p "$campaign/train"
mpirun -np 1 $train -m gpt-tiny -s 12 -B 4 -a ring --bucket-cap-mb 1,25 --val-batches 0 -q -o "$campaign/train/gpt_np1.h5"
"${launch[@]}" $train -m gpt-tiny -s 12 -B 4 -a ring --bucket-cap-mb 1,25 --val-batches 0 -q -o "$campaign/train/gpt_np$NP.h5"
echo "== report"
analysis/scaleprobe-analyze report "$campaign" -o "$campaign/report"
echo
echo "traces: $campaign/allreduce.h5 $campaign/bucket_sweep.h5 $campaign/train/"
echo "report: $campaign/report/report.md"
