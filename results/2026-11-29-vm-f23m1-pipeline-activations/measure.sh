#!/usr/bin/env bash
# Issue 32: the activation bytes each pipeline stage holds at its peak, GPipe against 1F1B, for
# M > S micro-batches (counted by gpt_train from the stage's tensors, so the load does not matter).
# gpt-tiny (4 blocks) cut into S = 2 and 4 stages, M = 2S + 1 micro-batches of one row, 2 steps.
# Usage (from this folder): bash measure.sh BUILD_DIR > measure.log 2>&1; traces go to raw/.
set -euo pipefail
build=${1:?usage: measure.sh BUILD_DIR}
mkdir -p raw
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
lscpu | grep -E '^(Model name|CPU family|Model|Stepping|CPU\(s\)):'
for stages in 2 4; do
  micro=$((2 * stages + 1))
  for schedule in gpipe 1f1b; do
    name=S${stages}_M${micro}_${schedule}
    echo "== $name"
    mpirun --oversubscribe -np "$stages" "$build/bin/gpt_train" -m gpt-tiny -s 2 --global-batch "$micro" \
      --pipeline-stages "$stages" --micro-batches "$micro" --schedule "$schedule" --threads 1 \
      --val-batches 0 --synthetic-bytes 200000 -o "raw/$name.h5"
  done
done
