#!/bin/bash
# Issue 28 item 4 on an AVX2 CPU: ResNet-20 (batch 32, one rank) before and after the direct
# convolution's weight gradient went to 4x3 row tiles (kernels/conv_direct_tiles.hpp) and auto
# stopped sending the 32x32 backwards to oneDNN. Per pass and thread count (1, 2): the base
# build's resnet_train, this build's, then the PyTorch peer (its OpenBLAS on the core the trainer
# chose), 12 steps each, the order of base and new alternating per pass. Then bench_kernels'
# convolutions, 1 thread: the base build and this one with every 3x3 convolution on the direct
# kernel, and this one with every 3x3 convolution in oneDNN.
#   bash measure.sh BASE_BUILD NEW_BUILD PASSES > measure.log
set -u
base=$1; new=$2; passes=${3:-5}
here=$(cd "$(dirname "$0")" && pwd); src=$(cd "$here/../.." && pwd)
out=$here/raw; mkdir -p "$out"
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE SCALEPROBE_GEMM SCALEPROBE_CONV   # the VM exports OPENBLAS_CORETYPE
cpu() { echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) family$(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model$(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2)"; }
echo "# start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) cpu$(cpu)"
for p in $(seq 1 "$passes"); do
  if [ $((p % 2)) = 1 ]; then order="base new"; else order="new base"; fi
  for t in 1 2; do
    for who in $order; do
      bin=$base; [ "$who" = new ] && bin=$new
      name="resnet-t$t-$who-p$p"
      OMP_NUM_THREADS=$t "$bin/trainers/resnet/resnet_train" -m resnet20 -B 32 --val-images 0 --threads "$t" -s 12 -q \
        --profile-kernels -o "$out/$name.h5" > "$out/$name.log" 2>&1 || { echo "FAILED $name"; tail -3 "$out/$name.log"; }
    done
    core=$(grep -o 'core=[A-Za-z0-9]*' "$out/resnet-t$t-new-p$p.log" | head -1 | cut -d= -f2)
    OPENBLAS_CORETYPE=$core OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t PYTHONPATH="$src/python" \
      /usr/bin/python3 -m scaleprobe_peers.resnet_torch --model resnet20 --batch 32 --threads "$t" --steps 12 \
      > "$out/torch-t$t-p$p.json" 2> "$out/torch-t$t-p$p.err" || { echo "FAILED torch t$t p$p"; tail -3 "$out/torch-t$t-p$p.err"; }
  done
  echo "# pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
bench() {  # bench BUILD MODE NAME
  SCALEPROBE_CONV=$2 OMP_NUM_THREADS=1 "$1/kernels/bench_kernels" --benchmark_filter='conv2d_.*K:3' --benchmark_min_time=0.3 \
    --benchmark_out="$out/bench_kernels-$3.json" --benchmark_out_format=json > /dev/null 2>&1 || echo "FAILED bench_kernels $3"
}
bench "$base" direct base-direct
bench "$new" direct new-direct
bench "$new" onednn new-onednn
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
