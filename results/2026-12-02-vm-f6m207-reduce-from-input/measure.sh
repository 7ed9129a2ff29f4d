#!/bin/bash
# The schedules before and after their first reduction of a block reads the input where it is
# (reduce_into) instead of a copy made into recv or scratch first, beside the library's own call in
# the same run: allreduce (ring, Rabenseifner, recursive doubling) and reduce-scatter (ring,
# halving), 2 ranks bound one per core, out of place, 64 KiB-16 MiB; interleaved passes, the side
# that runs first alternating.
#   bash measure.sh BEFORE_DIR AFTER_DIR PASSES RAW > RAW.log   (each DIR holds allreduce_perf and
#   collective_perf; traces and tables in RAW/; machine.txt here)
set -u
# shellcheck source=../lib/before_after.sh
source "$(dirname "$0")/../lib/before_after.sh" || exit 1

run() {  # BINARY_DIR NAME
  mpirun -np 2 --bind-to core "$1/allreduce_perf" -a mpi,ring,rabenseifner,doubling --sizes 64K,1M,16M \
    -o "$raw/$2.h5" > "$raw/$2.txt" 2>&1 &&
    mpirun -np 2 --bind-to core "$1/collective_perf" -c reduce_scatter -a mpi,ring,halving --sizes 64K,1M,16M \
      -o "$raw/$2-scatter.h5" > "$raw/$2-scatter.txt" 2>&1
}
before_after_main run "$@"
