#!/bin/bash
# Gloo's event-loop thread at its default priority (before: SCALEPROBE_GLOO_LOOP=normal) and at
# idle priority (after: the default since 8d6fb8b), one build, 2 ranks bound one per core; per pass
# and side: allreduce_perf --backend gloo (MPI_Allreduce, Gloo's own allreduce and two schedules
# on Gloo's pairs), then gpt-tiny and ResNet-20 data-parallel on Gloo and each without
# communication (--no-comm: the same ranks under the same load); the side that runs first alternating.
#   bash measure.sh BIN_DIR BIN_DIR PASSES RAW > RAW.log   (BIN_DIR holds allreduce_perf, gpt_train,
#   resnet_train; traces and logs in RAW/; machine.txt here)
set -u
# shellcheck source=../lib/before_after.sh
source "$(dirname "$0")/../lib/before_after.sh" || exit 1
export OPENBLAS_NUM_THREADS=1

run() {  # BINARY_DIR NAME
  local loop=idle
  [ "${2%%-*}" = before ] && loop=normal
  local np=(mpirun -x SCALEPROBE_GLOO_LOOP=$loop -x OPENBLAS_NUM_THREADS -np 2 --bind-to core)
  "${np[@]}" "$1/allreduce_perf" --backend gloo -a mpi,gloo,ring,rabenseifner --sizes 8,64K,1M,16M -n 200 \
    -o "$raw/$2.h5" > "$raw/$2.txt" 2>&1 &&
    "${np[@]}" "$1/gpt_train" -m gpt-tiny -B 8 -s 12 --val-batches 0 --backend gloo \
      -o "$raw/$2-gpt.h5" > "$raw/$2-gpt.txt" 2>&1 &&
    "${np[@]}" "$1/gpt_train" -m gpt-tiny -B 8 -s 12 --val-batches 0 --backend gloo --no-comm \
      -o "$raw/$2-gpt-nocomm.h5" > "$raw/$2-gpt-nocomm.txt" 2>&1 &&
    "${np[@]}" "$1/resnet_train" -m resnet20 -B 32 -s 12 --backend gloo \
      -o "$raw/$2-resnet.h5" > "$raw/$2-resnet.txt" 2>&1 &&
    "${np[@]}" "$1/resnet_train" -m resnet20 -B 32 -s 12 --backend gloo --no-comm \
      -o "$raw/$2-resnet-nocomm.h5" > "$raw/$2-resnet-nocomm.txt" 2>&1
}
before_after_main run "$@"
