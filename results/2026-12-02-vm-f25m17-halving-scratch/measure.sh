#!/bin/bash
# The halving reduce-scatter before and after its scratch shrank to the half a rank keeps
# (8005213: n/2 at 2 ranks instead of 1.5n), beside MPI_Reduce_scatter_block and the ring in the
# same run: 2 ranks bound one per core, 64 KiB-64 MiB; interleaved passes, the side that runs first
# alternating. A change of memory layout, timed to show it costs nothing.
#   bash measure.sh BEFORE_DIR AFTER_DIR PASSES RAW > RAW.log   (each DIR holds collective_perf;
#   traces and tables in RAW/; machine.txt here)
set -u
# shellcheck source=../lib/before_after.sh
source "$(dirname "$0")/../lib/before_after.sh" || exit 1

run() {  # BINARY_DIR NAME
  mpirun -np 2 --bind-to core "$1/collective_perf" -c reduce_scatter -a mpi,ring,halving --sizes 64K,1M,16M,64M \
    -o "$raw/$2.h5" > "$raw/$2.txt" 2>&1
}
before_after_main run "$@"
