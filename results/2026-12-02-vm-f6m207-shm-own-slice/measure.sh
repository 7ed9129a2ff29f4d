#!/bin/bash
# shm (the caller's private buffers) before and after each rank's own slice of a chunk is no longer
# staged (its reduction reads the input), beside MPI_Allreduce in the same run: 2 ranks bound one
# per core, both placements, 64 KiB-64 MiB; interleaved passes, the side that runs first alternating.
#   bash measure.sh BEFORE AFTER PASSES RAW > RAW.log   (traces and tables in RAW/; machine.txt here)
# SP_ALGORITHM=shm-seg times shm-seg (buffers in the segment; out of place its first reduction now
# reads the input instead of a copy of it in recv) instead of shm.
set -u
# shellcheck source=../lib/before_after.sh
source "$(dirname "$0")/../lib/before_after.sh" || exit 1

run() {  # BINARY NAME
  mpirun -np 2 --bind-to core "$1" -a "mpi,${SP_ALGORITHM:-shm}" --sizes 64K,1M,4M,16M,64M --placement both \
    -o "$raw/$2.h5" > "$raw/$2.txt" 2>&1
}
before_after_main run "$@"
