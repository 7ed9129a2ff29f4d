#!/bin/bash
# Gloo's own ring allreduce (the reference of the Gloo backend) before and after its reduce function
# makes out = a op b in one pass instead of copying a first, beside the ring schedule on Gloo in the
# same run: 2 ranks unbound (bound, Gloo waits a fixed 4 ms per call here:
# ../2026-11-25-vm-f25m17-gloo-vs-mpi), out of place, 64 KiB-16 MiB; interleaved passes, the side
# that runs first alternating.
#   bash measure.sh BEFORE AFTER PASSES RAW > RAW.log   (traces and tables in RAW/; machine.txt here)
set -u
# shellcheck source=../lib/before_after.sh
source "$(dirname "$0")/../lib/before_after.sh" || exit 1

run() {  # BINARY NAME
  mpirun -np 2 --bind-to none "$1" --backend gloo -a gloo,ring --sizes 64K,1M,16M -o "$raw/$2.h5" > "$raw/$2.txt" 2>&1
}
before_after_main run "$@"
