#!/bin/bash
# Bruck's all-gather before and after it gathers in place in recv (no rotated copy in scratch, no
# final rotation), beside MPI_Allgather and the ring in the same run: 2 ranks bound one per core,
# out of place (all-gather runs only so), 1 KiB-16 MiB; interleaved passes, the side that runs first alternating.
#   bash measure.sh BEFORE_DIR AFTER_DIR PASSES RAW > RAW.log   (each DIR holds collective_perf;
#   traces and tables in RAW/; machine.txt here)
set -u
# shellcheck source=../lib/before_after.sh
source "$(dirname "$0")/../lib/before_after.sh" || exit 1

run() {  # BINARY_DIR NAME
  mpirun -np 2 --bind-to core "$1/collective_perf" -c all_gather -a mpi,ring,bruck \
    --sizes 1K,64K,1M,16M -o "$raw/$2.h5" > "$raw/$2.txt" 2>&1
}
before_after_main run "$@"
