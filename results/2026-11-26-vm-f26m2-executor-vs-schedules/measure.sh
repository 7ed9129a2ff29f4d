#!/bin/bash
# Interleaved old (3b1d86a) vs new (step programs) allreduce_perf at 2 ranks, bound to core.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
OLD=/work/old-3b1d86a/build/release/collectives/allreduce_perf
NEW=${BUILD:-/work/main/build}/release/collectives/allreduce_perf
out=${1:-raw}; mkdir -p $out
for p in 1 2 3 4 5 6; do
  for side in old new; do
    [ $((p % 2)) = 0 ] && side=$([ $side = old ] && echo new || echo old)
    bin=$OLD; [ $side = new ] && bin=$NEW
    mpirun -np 2 --bind-to core $bin --sizes 8,1K,64K,1M,16M -a all --no-membw -q --json $out/${side}_p$p.json -o $out/${side}_p$p.h5 > $out/${side}_p$p.txt 2>&1 || echo "FAIL $side $p"
  done
done
