#!/bin/bash
# gpt-tiny --depth 8 in a 2-stage 1F1B pipeline (global batch 32, M = 4 and 8 micro-batches), 2
# ranks bound one per core, one thread: gpt_train builds given as NAME=BINARY, each with Open MPI's
# shared-memory transport as it comes (single copy through CMA) and with single copy off (large
# messages in fragments, as on the GPU node of ../2026-11-30-gpu-node-f6m207-pipeline).
# Interleaved passes: pass, then M, then single-copy setting, then build.
#   bash measure.sh RAW_DIR PASSES NAME=BINARY... > measure.log
set -u
raw=$1 passes=$2
shift 2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
mkdir -p "$raw"
{ lscpu; grep -m1 '^flags' /proc/cpuinfo; mpirun --version | head -1; } > machine.txt
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $(seq 1 "$passes"); do
  for m in 4 8; do
    for copy in cma none; do
      mca=(); [ "$copy" = none ] && mca=(--mca btl_vader_single_copy_mechanism none)
      for build in "$@"; do
        side=${build%%=*} bin=${build#*=}
        name=m${m}-$copy-$side-p$p
        mpirun -np 2 --bind-to core "${mca[@]}" "$bin" -m gpt-tiny --depth 8 -B 32 --pipeline-stages 2 \
          --micro-batches "$m" --schedule 1f1b -s 6 --val-batches 0 --threads 1 -q --scaling strong \
          -o "$raw/$name.h5" > "$raw/$name.txt" 2>&1 || echo "FAILED $name"
      done
    done
  done
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
