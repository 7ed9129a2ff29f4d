#!/bin/bash
# gpt-tiny --depth 8 in a 2-stage 1F1B pipeline (global batch 32, M = 4 and 8 micro-batches), 2
# ranks bound one per core, one thread, with Open MPI's shared memory as it comes (single copy
# through CMA) and with single copy off (large messages in fragments, as on the GPU node); one
# gpt_train per NAME=BINARY argument, run alternately. Interleaved passes: pass, M, setting, binary.
#   bash measure.sh PASSES NAME=BINARY... > measure.log   (raw/ here)
set -u
passes=$1; shift
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
mkdir -p raw
{ lscpu; grep -m1 '^flags' /proc/cpuinfo; mpirun --version | head -1; } > machine.txt
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $(seq 1 "$passes"); do
  for m in 4 8; do
    for copy in cma none; do
      mca=(); [ "$copy" = none ] && mca=(--mca btl_vader_single_copy_mechanism none)
      for side in "$@"; do
        name=m${m}-$copy-${side%%=*}-p$p
        mpirun -np 2 --bind-to core "${mca[@]}" "${side#*=}" -m gpt-tiny --depth 8 -B 32 --pipeline-stages 2 \
          --micro-batches "$m" --schedule 1f1b -s 6 --val-batches 0 --threads 1 -q --scaling strong \
          -o "raw/$name.h5" > "raw/$name.txt" 2>&1 || echo "FAILED $name"
      done
    done
  done
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
