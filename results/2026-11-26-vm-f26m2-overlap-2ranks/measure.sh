#!/bin/bash
# Issue 25 "done when" at 2 ranks x 1 core: gpt-tiny and ResNet-20, caps 1, 5 and 25 MiB cycled
# step by step, each model run in four ways per pass — no communication (--no-comm, the
# same-load baseline), --overlap progress (the default here: one core per rank), --overlap none,
# and on Gloo (--overlap thread: its waits sleep) — the order rotating by one every pass.
#   bash measure.sh BUILD_DIR OUT_DIR PASSES
set -u
build=${1:-build/release}; out=${2:-raw}; passes=${3:-5}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
# The VM exports OPENBLAS_CORETYPE=Haswell (1.5x slower GEMMs here, results/2026-11-26-vm-f26m2-blas-core):
# OpenBLAS's own choice instead (Cooperlake on this CPU).
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
common="-s 21 -q --bucket-cap-mb 1,5,25 -a ring"
declare -A model=([gpt]="$build/trainers/gpt/gpt_train -m gpt-tiny -B 8 --val-batches 0"
                  [resnet]="$build/trainers/resnet/resnet_train -m resnet20 -B 32 --val-images 0")
modes=(nocomm progress none gloo)
declare -A flags=([nocomm]="--no-comm" [progress]="--overlap progress" [none]="--overlap none"
                  [gloo]="--backend gloo --overlap thread")
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $(seq 1 "$passes"); do
  for m in gpt resnet; do
    for i in 0 1 2 3; do
      mode=${modes[$(( (i + p - 1) % 4 ))]}
      name="$m-$mode-p$p"
      mpirun -np 2 --bind-to core ${model[$m]} $common ${flags[$mode]} -o "$out/$name.h5" > "$out/$name.log" 2>&1 \
        || { echo "FAILED $name"; tail -3 "$out/$name.log"; }
    done
  done
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
