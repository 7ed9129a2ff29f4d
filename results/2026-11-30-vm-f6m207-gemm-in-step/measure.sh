#!/bin/bash
# Issue 28: gpt-tiny's GEMMs and attention (batch 8, one thread) inside the training step against the
# same kernels at the same shapes in bench_kernels, where each shape runs in a loop on its own buffers
# (warm caches). Per pass: bench_kernels (matmul forward and backward at the GPT block's four shapes,
# attention forward and backward at 64-row query blocks), then gpt_train's kernel profile.
#   bash measure.sh BUILD PASSES > measure.log
set -u
build=${1:-../../build/release}; passes=${2:-3}
out=$(cd "$(dirname "$0")" && pwd)/raw
mkdir -p "$out"
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE  # the trainer's own core choice (kernels/blas_core)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
echo "# start $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model $(grep -m1 '^model[[:space:]]' /proc/cpuinfo | cut -d: -f2) load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $(seq 1 "$passes"); do
  "$build/kernels/bench_kernels" --benchmark_filter='BM_(matmul_(forward|backward)|attention_(forward|backward)/64/)' \
    --benchmark_min_time=0.5 --benchmark_out="$out/bench-p$p.json" --benchmark_out_format=json > "$out/bench-p$p.txt" 2>&1 \
    || { echo "FAILED bench pass $p"; tail -3 "$out/bench-p$p.txt"; }
  "$build/trainers/gpt/gpt_train" -m gpt-tiny -B 8 --val-batches 0 --threads 1 -s 12 -q --profile-kernels \
    -o "$out/gpt-p$p.h5" > "$out/gpt-p$p.log" 2>&1 || { echo "FAILED gpt pass $p"; tail -3 "$out/gpt-p$p.log"; }
  echo "# pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
