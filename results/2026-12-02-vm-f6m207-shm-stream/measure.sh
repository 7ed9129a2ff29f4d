#!/bin/bash
# shm (the caller's private buffers) before and after it gathers large out-of-place results with
# non-temporal stores, beside MPI_Allreduce in the same run: 2 ranks bound one per core, both
# placements (in place is the control: it never streams), 64 KiB-64 MiB around the threshold;
# interleaved passes, the side that runs first alternating.
#   bash measure.sh BEFORE AFTER PASSES RAW > RAW.log   (traces and tables in RAW/; machine.txt here)
# SP_ALGORITHM=shm-seg times shm-seg (buffers in the segment) instead of shm.
set -u
before=$(realpath "$1") after=$(realpath "$2") passes=${3:-5} raw=$(realpath -m "${4:-raw}") || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mkdir -p "$raw" && cd "$(dirname "$0")" || exit 1
source ../lib/before_after.sh

run() {  # BINARY NAME
  mpirun -np 2 --bind-to core "$1" -a "mpi,${SP_ALGORITHM:-shm}" --sizes 64K,1M,4M,8M,16M,64M --placement both \
    -o "$raw/$2.h5" > "$raw/$2.txt" 2>&1
}
before_after "$passes" run "$before" "$after"
