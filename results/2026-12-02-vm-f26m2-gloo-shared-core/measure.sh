#!/bin/bash
# The data-parallel engine on Gloo with each rank bound to one core (no spare core): overlap mode
# thread (the default the engine picks for Gloo there) against none, and each model without
# communication (--no-comm, the same ranks under the same load); gpt-tiny (8 rows) and ResNet-20
# (32 images), cap 25 MiB, 12 steps, 2 ranks; the order of the sides rotated by one every pass.
#   bash measure.sh BIN_DIR PASSES RAW > RAW.log   (BIN_DIR holds gpt_train and resnet_train;
#   traces and logs in RAW/, machine.txt here)
set -u
bin=${1:?BIN_DIR}; passes=${2:?PASSES}; raw=${3:?RAW}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$raw"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
{ date -u +%Y-%m-%dT%H:%M:%SZ; nproc; lscpu; mpirun --version | head -1; "$bin/gpt_train" --version; } > "$here/machine.txt" 2>&1
sides=(thread none nocomm)
for p in $(seq 1 "$passes"); do
  for i in 0 1 2; do
    side=${sides[$(( (i + p - 1) % 3 ))]}
    mode=(--overlap "$side"); [ "$side" = nocomm ] && mode=(--no-comm)
    np=(mpirun -x OPENBLAS_NUM_THREADS -np 2 --bind-to core)
    for model in gpt resnet; do
      name=p$p-$side-$model
      if [ "$model" = gpt ]; then
        "${np[@]}" "$bin/gpt_train" -m gpt-tiny -B 8 -s 12 --val-batches 0 --backend gloo "${mode[@]}" \
          -o "$raw/$name.h5" > "$raw/$name.txt" 2>&1
      else
        "${np[@]}" "$bin/resnet_train" -m resnet20 -B 32 -s 12 --backend gloo "${mode[@]}" \
          -o "$raw/$name.h5" > "$raw/$name.txt" 2>&1
      fi
      echo "$(date -u +%H:%M:%S) $name: exit $? $(grep -h 'ms/iteration' "$raw/$name.txt" | cut -c1-160)"
    done
  done
done
