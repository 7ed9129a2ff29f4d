#!/usr/bin/env bash
# shm and shm-seg against MPI_Allreduce at three pipelining chunks, 2 ranks bound one per core,
# 3 passes with the chunk order rotated each pass; every run's table and trace kept under raw/.
# Run from the repository root after building the release preset:
#   bash results/2026-11-26-vm-f26m2-shm-chunks/run.sh
set -eu
out=$(dirname "$0")/raw
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
chunks=(64K 256K 1M)
for pass in 1 2 3; do
  for k in 0 1 2; do
    c=${chunks[$(( (k + pass - 1) % 3 ))]}
    mpirun -np 2 --bind-to core build/release/bin/allreduce_perf -a mpi,shm,shm-seg --sizes 1M,16M,64M --chunk "$c" \
      -o "$out/chunk${c}_p${pass}.h5" >"$out/chunk${c}_p${pass}.log" 2>&1
  done
done
