#!/bin/bash
# gpt-tiny (batch 8, one rank) before and after the gradient norm's sum of squares went to fixed
# blocks on the threads (kernels/optim.cpp). Per pass and thread count (1, 2): the base build's
# gpt_train and this build's, 12 steps each with --profile-kernels, their order alternating.
#   bash measure.sh BASE_BUILD NEW_BUILD PASSES > measure.log
set -u
base=$1; new=$2; passes=${3:-5}
here=$(cd "$(dirname "$0")" && pwd); out=$here/raw; mkdir -p "$out"
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE SCALEPROBE_GEMM
echo "# start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) family$(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model$(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2)"
for p in $(seq 1 "$passes"); do
  if [ $((p % 2)) = 1 ]; then order="base new"; else order="new base"; fi
  for t in 1 2; do
    for who in $order; do
      bin=$base; [ "$who" = new ] && bin=$new
      name="gpt-t$t-$who-p$p"
      OMP_NUM_THREADS=$t "$bin/trainers/gpt/gpt_train" -m gpt-tiny -B 8 --val-batches 0 --threads "$t" -s 12 -q \
        --profile-kernels -o "$out/$name.h5" > "$out/$name.log" 2>&1 || { echo "FAILED $name"; tail -3 "$out/$name.log"; }
    done
  done
  echo "# pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
