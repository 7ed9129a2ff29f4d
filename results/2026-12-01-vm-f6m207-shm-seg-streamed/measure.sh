#!/bin/bash
# gpt-tiny data-parallel on 2 ranks bound one per core, one thread, without and with shm-seg's
# buckets stream (the engine starts a bucket whose gradients live in the node segment once its last
# chunk is final and reduces each chunk as every rank finishes it): ring and shm-seg at caps 1 and
# 25 MiB cycled step by step in one run (progress mode, the default with no spare core).
# Interleaved passes, the order of the two sides alternating from pass to pass. A side is a binary,
# with flags if any (one build with and without --no-stream-buckets).
#   bash measure.sh BEFORE AFTER PASSES RAW > RAW.log   (traces and logs in RAW/)
set -u
before=$1 after=$2 passes=${3:-5} raw=${4:-raw}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
mkdir -p "$raw"
{ lscpu; grep -m1 '^flags' /proc/cpuinfo; mpirun --version | head -1; } > machine.txt
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $(seq 1 "$passes"); do
  sides="before after"; [ $((p % 2)) -eq 0 ] && sides="after before"
  for side in $sides; do
    bin=$before; [ "$side" = after ] && bin=$after
    name=$side-p$p
    # shellcheck disable=SC2086  # $bin: a binary and its flags
    mpirun -np 2 --bind-to core $bin -m gpt-tiny -B 8 --threads 1 --synthetic-bytes 2000000 -s 44 \
      --val-batches 0 -a ring,shm-seg --bucket-cap-mb 1,25 -o "$raw/$name.h5" > "$raw/$name.txt" 2>&1 ||
      echo "FAILED $name"
  done
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
