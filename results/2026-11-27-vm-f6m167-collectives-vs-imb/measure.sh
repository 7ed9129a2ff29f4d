#!/bin/bash
# Issue 29: collective_perf's timing of MPI_Allgather, MPI_Bcast and MPI_Alltoall (its `mpi` rows)
# against IMB-MPI1's Allgather, Bcast and Alltoall on the same Open MPI, 2 ranks on one node,
# interleaved pass by pass (IMB first in odd passes, collective_perf first in even ones). IMB is not
# in Debian: build it outside the tree (README.md says how).
#   bash measure.sh BUILD_DIR IMB_MPI1 PASSES [SYNC [RAW]]   (RAW/, default raw/, here)
# Sizes: IMB's #bytes is what one rank contributes (Allgather), one rank pair's block (Alltoall) or
# the message (Bcast); collective_perf's size is nccl-tests': the whole gathered buffer and the whole
# all-to-all send buffer, so at 2 ranks twice IMB's for those two. IMB synchronises the ranks with
# a barrier after every timed call (its default -sync 1): collective_perf runs with --sync $sync
# (SYNC, default barrier; `none` for the comparison without it).
set -u
build=$1 imb=$2 passes=${3:-5} sync=${4:-barrier} raw=${5:-raw}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$raw"
run() { mpirun -np 2 "$@"; }
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) $(grep -m1 'model name' /proc/cpuinfo)"
for p in $(seq 1 "$passes"); do
  theirs() { run "$imb" Allgather Bcast Alltoall -msglog 10:22 -npmin 2 > "$raw/imb-p$p.txt" || echo "FAILED imb $p"; }
  ours() {
    run "$build/bin/collective_perf" -c all_gather -a mpi --sync $sync -b 2K -e 8M --no-membw -q -o "$raw/all_gather-p$p.h5" > "$raw/all_gather-p$p.txt" || echo "FAILED all_gather $p"
    run "$build/bin/collective_perf" -c broadcast -a mpi --sync $sync -b 1K -e 4M --no-membw -q -o "$raw/broadcast-p$p.h5" > "$raw/broadcast-p$p.txt" || echo "FAILED broadcast $p"
    run "$build/bin/collective_perf" -c all_to_all -a mpi --sync $sync -b 2K -e 8M --no-membw -q -o "$raw/all_to_all-p$p.h5" > "$raw/all_to_all-p$p.txt" || echo "FAILED all_to_all $p"
  }
  if [ $((p % 2)) = 1 ]; then theirs; ours; else ours; theirs; fi
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
