#!/usr/bin/env bash
# SIMULATED: Rabenseifner with the halving's nearest partners first (this commit) beside SMPI's own
# MPI_Allreduce (Open MPI's selection), on scripts/simulate's default flat platform of hosts of 8
# ranks, at 64 and 256 ranks. Run from this folder: bash measure.sh > measure.log 2>&1
set -euo pipefail
root=$(cd ../.. && pwd)
for nodes in 8 32; do
  echo "## $nodes hosts x 8 ranks"
  "$root/scripts/simulate" --build "$root/build/smpi" --nodes "$nodes" --ranks-per-node 8 allreduce_perf \
    --sizes 64K,256K,1M -a rabenseifner,mpi -n 3 -w 1 -q -o "traces/rabenseifner_N${nodes}_t8.h5"
done
