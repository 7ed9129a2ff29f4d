#!/bin/bash
# The measured side of the step replay's validation (docs/simulation.md): per pass, interleaved,
#  - calib: the ring allreduce at 2 ranks, 64 KiB-16 MiB (the calibration of the on-node link);
#  - gpt-tiny data-parallel, 8 rows per rank, 16 steps, ring buckets at caps 1 and 25 MiB cycled
#    step by step: 2 ranks in progress overlap (auto: no spare core), 2 ranks --overlap none,
#    4 ranks oversubscribed (2 vCPUs) in progress overlap.
# Ranks bound one per core where there are cores enough; one thread each.
#   bash measure.sh BUILD_DIR PASSES   (raw/, machine.txt here; the log on stdout)
set -u
build=$1 passes=${2:-3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
mkdir -p raw
{ lscpu; grep -m1 '^flags' /proc/cpuinfo; } > machine.txt
gpt=("$build/bin/gpt_train" -m gpt-tiny -B 8 -s 16 --val-batches 0 -a ring --bucket-cap-mb 1,25 -q)
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) $(grep -m1 'model name' /proc/cpuinfo)"
for p in $(seq 1 "$passes"); do
  mpirun -np 2 --bind-to core "$build/bin/allreduce_perf" -a ring -b 64K -e 16M -f 4 -q -o "raw/calib-p$p.h5" \
    > "raw/calib-p$p.txt" 2>&1 || echo "FAILED calib pass $p"
  mpirun -np 2 --bind-to core "${gpt[@]}" -o "raw/gpt2-progress-p$p.h5" > "raw/gpt2-progress-p$p.txt" 2>&1 \
    || echo "FAILED gpt2-progress pass $p"
  mpirun -np 2 --bind-to core "${gpt[@]}" --overlap none -o "raw/gpt2-none-p$p.h5" > "raw/gpt2-none-p$p.txt" 2>&1 \
    || echo "FAILED gpt2-none pass $p"
  mpirun -np 4 --oversubscribe --bind-to none "${gpt[@]}" -o "raw/gpt4-progress-p$p.h5" > "raw/gpt4-progress-p$p.txt" 2>&1 \
    || echo "FAILED gpt4-progress pass $p"
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
