#!/bin/bash
# Recursive doubling beside MPI_Allreduce and the other point-to-point schedules, in the same
# allreduce_perf run: 2 ranks bound one per core, out of place, 8 B-1 MiB, PASSES runs.
#   bash measure.sh BINARY PASSES RAW > RAW.log   (traces and tables in RAW/; machine.txt here)
set -u
binary=$(realpath "$1") passes=${2:-6} raw=$(realpath -m "${3:-raw}") || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mkdir -p "$raw" && cd "$(dirname "$0")" || exit 1
{ lscpu; grep -m1 '^flags' /proc/cpuinfo; mpirun --version | head -1; } > machine.txt
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $(seq 1 "$passes"); do
  mpirun -np 2 --bind-to core "$binary" -a mpi,tree,ring,rabenseifner,doubling --sizes 8,1K,16K,64K,256K,1M \
    -o "$raw/p$p.h5" > "$raw/p$p.txt" 2>&1 || echo "FAILED p$p"
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
