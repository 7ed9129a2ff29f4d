#!/bin/bash
# As measure.sh, for the binomial reduce (its leaves send their input from the send buffer; the
# other ranks receive their first child's part straight into recv and add their input there):
# collective_perf -c reduce at 64 KiB-16 MiB beside MPI_Reduce, 2 ranks bound one per core.
#   bash measure-reduce.sh BEFORE_DIR AFTER_DIR PASSES RAW > RAW.log   (each DIR holds collective_perf)
set -u
# shellcheck source=../lib/before_after.sh
source "$(dirname "$0")/../lib/before_after.sh" || exit 1

run() {  # BINARY_DIR NAME
  mpirun -np 2 --bind-to core "$1/collective_perf" -c reduce -a mpi,binomial --sizes 64K,1M,16M \
    -o "$raw/$2-reduce.h5" > "$raw/$2-reduce.txt" 2>&1
}
before_after_main run "$@"
