#!/bin/bash
# Issue 28 item 4: ResNet-20 (batch 32, one rank) before and after a residual block's end became
# one pass (batchnorm_add_relu_forward_train) and the ReLU masks went into the batch norm's
# backward (batchnorm_relu_backward; an identity block's input gradient sharing its output
# gradient's buffer). Per pass and thread count (1, 2): the base build's resnet_train, this
# build's, then the PyTorch peer (its OpenBLAS on the core the trainer chose), 12 steps each, the
# order of base and new alternating per pass. Then bench_kernels' batch norm kernels, 1 thread,
# both builds.
#   bash measure.sh BASE_BUILD NEW_BUILD PASSES > measure.log
set -u
base=$1; new=$2; passes=${3:-5}
here=$(cd "$(dirname "$0")" && pwd); src=$(cd "$here/../.." && pwd)
out=$here/raw; mkdir -p "$out"
# shellcheck source=../lib/base_new.sh
source "$here/../lib/base_new.sh"
base_new_resnet_passes "$base" "$new" "$passes" "$out" "$src"
bench() {  # bench BUILD NAME
  OMP_NUM_THREADS=1 "$1/kernels/bench_kernels" --benchmark_filter='BM_(batchnorm|relu|residual)' --benchmark_min_time=0.3 \
    --benchmark_out="$out/bench_kernels-$2.json" --benchmark_out_format=json > /dev/null 2>&1 || echo "FAILED bench_kernels $2"
}
bench "$base" base
bench "$new" new
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
