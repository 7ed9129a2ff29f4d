#!/bin/bash
# Issue 27's engine target at 2 ranks x 1 core: gpt-tiny (8 rows per rank) and ResNet-20 with the
# gradient buckets allreduced by ring and by shm, cycled step by step in one run (the same load,
# interleaved), caps 1 and 25 MiB, the engine's default overlap mode (progress here), every pass kept.
#   bash measure.sh BUILD_DIR OUT_DIR PASSES
set -u
build=${1:-build/release}; out=${2:-raw}; passes=${3:-5}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
# The VM exports OPENBLAS_CORETYPE=Haswell: OpenBLAS's own choice instead (as the overlap campaign).
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
common="-s 25 -q --bucket-cap-mb 1,25 -a ring,shm"
declare -A model=([gpt]="$build/trainers/gpt/gpt_train -m gpt-tiny -B 8 --val-batches 0"
                  [resnet]="$build/trainers/resnet/resnet_train -m resnet20 -B 32 --val-images 0")
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $(seq 1 "$passes"); do
  for m in gpt resnet; do
    name="$m-p$p"
    mpirun -np 2 --bind-to core ${model[$m]} $common -o "$out/$name.h5" > "$out/$name.log" 2>&1 \
      || { echo "FAILED $name"; tail -3 "$out/$name.log"; }
  done
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
