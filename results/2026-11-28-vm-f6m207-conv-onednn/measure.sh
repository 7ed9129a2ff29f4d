#!/bin/bash
# Issue 28 item 4's decision: ResNet-20's step with the 3x3 convolutions chosen by
# SCALEPROBE_CONV=auto (oneDNN for outputs of at most 16x16, kernels/conv_onednn.hpp) against every
# one on our direct kernel (direct), same binary, interleaved (the order alternates per pass), one
# rank, 1 and 2 threads, --profile-kernels; then bench_kernels' convolutions once per mode (every
# 3x3 shape through oneDNN, or none), 1 thread.
#   bash measure.sh BUILD_DIR OUT_DIR PASSES
set -u
build=${1:-../../build/release}; out=${2:-raw}; passes=${3:-5}
mkdir -p "$out"
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE SCALEPROBE_GEMM SCALEPROBE_CONV
cpu() { echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) family$(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model$(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2)"; }
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) cpu$(cpu)"
for p in $(seq 1 "$passes"); do
  if [ $((p % 2)) = 1 ]; then order="direct auto"; else order="auto direct"; fi
  for t in 1 2; do
    for c in $order; do
      name="resnet-t$t-$c-p$p"
      SCALEPROBE_CONV=$c OMP_NUM_THREADS=$t "$build/bin/resnet_train" -m resnet20 -B 32 --val-images 0 --threads "$t" -s 12 -q \
        --profile-kernels -o "$out/$name.h5" > "$out/$name.log" 2>&1 || { echo "FAILED $name"; tail -3 "$out/$name.log"; }
    done
  done
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
for c in direct onednn; do
  SCALEPROBE_CONV=$c OMP_NUM_THREADS=1 "$build/kernels/bench_kernels" --benchmark_filter='conv2d_' --benchmark_min_time=0.3 \
    --benchmark_out="$out/bench_kernels-$c.json" --benchmark_out_format=json > /dev/null 2>&1 || echo "FAILED bench_kernels $c"
done
echo "end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
