#!/bin/bash
# gpt-tiny data-parallel on 2 ranks bound one per core, one thread, before and after feb808f (the
# gradient buffer lives in the node segment, so shm-seg reduces it in place instead of copying each
# bucket into the segment and back): ring, shm and shm-seg at caps 1 and 25 MiB cycled step by
# step in one run (progress mode, the default with no spare core). Interleaved passes, the order
# of the two builds alternating from pass to pass.
#   bash measure.sh BEFORE_BIN AFTER_BIN PASSES > measure.log   (raw/ here)
set -u
before=$1 after=$2 passes=${3:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
mkdir -p raw
{ lscpu; grep -m1 '^flags' /proc/cpuinfo; mpirun --version | head -1; } > machine.txt
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $(seq 1 "$passes"); do
  sides="before after"; [ $((p % 2)) -eq 0 ] && sides="after before"
  for side in $sides; do
    bin=$before; [ "$side" = after ] && bin=$after
    name=$side-p$p
    mpirun -np 2 --bind-to core "$bin" -m gpt-tiny -B 8 --threads 1 --synthetic-bytes 2000000 -s 36 \
      --val-batches 0 -a ring,shm,shm-seg --bucket-cap-mb 1,25 -o "raw/$name.h5" > "raw/$name.txt" 2>&1 ||
      echo "FAILED $name"
  done
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
