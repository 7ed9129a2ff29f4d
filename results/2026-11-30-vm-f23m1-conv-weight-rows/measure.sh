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
# shellcheck source=../lib/base_new.sh
source "$here/../lib/base_new.sh"
base_new_resnet_passes "$base" "$new" "$passes" "$out" "$src"
bench() {  # bench BUILD MODE NAME
  SCALEPROBE_CONV=$2 OMP_NUM_THREADS=1 "$1/kernels/bench_kernels" --benchmark_filter='conv2d_.*K:3' --benchmark_min_time=0.3 \
    --benchmark_out="$out/bench_kernels-$3.json" --benchmark_out_format=json > /dev/null 2>&1 || echo "FAILED bench_kernels $3"
}
bench "$base" direct base-direct
bench "$new" direct new-direct
bench "$new" onednn new-onednn
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
