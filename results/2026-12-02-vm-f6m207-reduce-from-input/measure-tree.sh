#!/bin/bash
# The tree allreduce before and after its inner ranks' first reduction of a segment reads the input
# (c7985be), beside MPI_Allreduce in the same run: 2 ranks bound one per core, out of place,
# 64 KiB-16 MiB; interleaved passes, the side that runs first alternating.
#   bash measure-tree.sh BEFORE_DIR AFTER_DIR PASSES RAW > RAW.log   (each DIR holds allreduce_perf)
set -u
# shellcheck source=../lib/before_after.sh
source "$(dirname "$0")/../lib/before_after.sh" || exit 1

run() {  # BINARY_DIR NAME
  mpirun -np 2 --bind-to core "$1/allreduce_perf" -a mpi,tree --sizes 64K,1M,16M -o "$raw/$2.h5" > "$raw/$2.txt" 2>&1
}
before_after_main run "$@"
