#!/bin/bash
# shm-seg before and after its reduced slices are written straight into every rank's buffer (no
# gather phase), beside MPI_Allreduce and shm in the same run: 2 ranks bound one per core, both
# placements, 1 KiB-64 MiB; interleaved passes, the side that runs first alternating.
#   bash measure.sh BEFORE AFTER PASSES RAW > RAW.log   (traces and tables in RAW/; machine.txt here)
set -u
# shellcheck source=../lib/before_after.sh
source "$(dirname "$0")/../lib/before_after.sh" || exit 1

run() {  # BINARY NAME
  mpirun -np 2 --bind-to core "$1" -a mpi,shm,shm-seg --sizes 1K,64K,1M,16M,64M --placement both \
    -o "$raw/$2.h5" > "$raw/$2.txt" 2>&1
}
before_after_main run "$@"
