#!/bin/bash
# The engine before issue 25 (3b1d86a: a communication thread on the rank's only core, a handshake
# per bucket) against this one (auto: progress mode with one core per rank), with the no-comm
# baseline, 2 ranks x 1 core, gpt-tiny and ResNet-20, caps 1, 5, 25 cycled; the order of the three
# rotates every pass.   bash measure-old-engine.sh OLD_BUILD NEW_BUILD OUT_DIR PASSES
set -u
old=$1; new=$2; out=${3:-raw-old}; passes=${4:-5}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
common="-s 21 -q --bucket-cap-mb 1,5,25 -a ring"
args() { case $1 in gpt) echo "trainers/gpt/gpt_train -m gpt-tiny -B 8 --val-batches 0";;
                    resnet) echo "trainers/resnet/resnet_train -m resnet20 -B 32 --val-images 0";; esac; }
sides=(old new nocomm)
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $(seq 1 "$passes"); do
  for m in gpt resnet; do
    for i in 0 1 2; do
      side=${sides[$(( (i + p - 1) % 3 ))]}
      case $side in old) cmd="$old/$(args $m)";; new) cmd="$new/$(args $m)";; nocomm) cmd="$new/$(args $m) --no-comm";; esac
      mpirun -np 2 --bind-to core $cmd $common -o "$out/$m-$side-p$p.h5" > "$out/$m-$side-p$p.log" 2>&1 \
        || { echo "FAILED $m-$side-p$p"; tail -3 "$out/$m-$side-p$p.log"; }
    done
  done
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
