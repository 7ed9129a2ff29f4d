#!/bin/bash
# Today's schedule changes (2026-12-02: Bruck all-gather in place, first reductions from the input,
# shm's own slice unstaged) measured on another CPU than the one they were made on: the schedules
# as of e431860 against 24c1ecb's, beside the library's own call in the same run; 2 ranks bound one
# per core; interleaved passes, the side that runs first alternating.
#   bash measure.sh BEFORE_DIR AFTER_DIR PASSES RAW > RAW.log   (each DIR holds allreduce_perf and
#   collective_perf; traces and tables in RAW/; machine.txt here)
set -u
# shellcheck source=../lib/before_after.sh
source "$(dirname "$0")/../lib/before_after.sh" || exit 1

run() {  # BINARY_DIR NAME
  local np=(mpirun -np 2 --bind-to core)
  "${np[@]}" "$1/allreduce_perf" -a mpi,ring,rabenseifner,doubling,tree --sizes 64K,1M,16M \
    -o "$raw/$2.h5" > "$raw/$2.txt" 2>&1 &&
    "${np[@]}" "$1/collective_perf" -c reduce_scatter -a mpi,ring,halving --sizes 64K,1M,16M \
      -o "$raw/$2-scatter.h5" > "$raw/$2-scatter.txt" 2>&1 &&
    "${np[@]}" "$1/collective_perf" -c all_gather -a mpi,bruck --sizes 64K,1M,16M \
      -o "$raw/$2-gather.h5" > "$raw/$2-gather.txt" 2>&1 &&
    "${np[@]}" "$1/allreduce_perf" -a mpi,shm,shm-seg --sizes 64K,1M,16M,64M --placement both \
      -o "$raw/$2-shm.h5" > "$raw/$2-shm.txt" 2>&1
}
before_after_main run "$@"
