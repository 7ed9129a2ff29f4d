#!/bin/bash
# Issue 28 item 2's decision: the trainers' steps with every GEMM in OpenBLAS (its best core,
# kernels/blas_core) against every GEMM in oneDNN (SCALEPROBE_GEMM, kernels/gemm.hpp), same binary,
# interleaved (the order alternates per pass), one rank, 1 and 2 threads, --profile-kernels.
#   bash measure.sh BUILD_DIR OUT_DIR PASSES
set -u
build=${1:-../../build/release}; out=${2:-raw}; passes=${3:-5}
mkdir -p "$out"
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE SCALEPROBE_GEMM
declare -A ours=([gpt]="$build/bin/gpt_train -m gpt-tiny -B 8 --val-batches 0"
                 [resnet]="$build/bin/resnet_train -m resnet20 -B 32 --val-images 0")
steps=12
cpu() { echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) family$(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model$(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2)"; }
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) cpu$(cpu)"
for p in $(seq 1 "$passes"); do
  if [ $((p % 2)) = 1 ]; then order="openblas onednn"; else order="onednn openblas"; fi
  for t in 1 2; do
    for m in gpt resnet; do
      for g in $order; do
        name="$m-t$t-$g-p$p"
        SCALEPROBE_GEMM=$g OMP_NUM_THREADS=$t ${ours[$m]} --threads "$t" -s $steps -q --profile-kernels -o "$out/$name.h5" \
          > "$out/$name.log" 2>&1 || { echo "FAILED $name"; tail -3 "$out/$name.log"; }
      done
    done
  done
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
