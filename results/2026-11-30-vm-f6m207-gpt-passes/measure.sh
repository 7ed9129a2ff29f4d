#!/bin/bash
# Issue 28 item 3: gpt-tiny (batch 8, one rank) from three builds beside the PyTorch peer. base:
# before this campaign's kernels; fused: the causal softmax on whole vectors, three GEMMs' bias
# (and attproj's residual) added by the kernel that reads their output next (attention, ln2,
# GELU), layer norm's backward in one pass with its parameter gradients, AdamW with one division,
# the gradient norm on sixteen partial sums (e3528d7); new: fused, the weight gradients summed
# over at most 512 rows per GEMM, and fc's and qkv's bias gradients taken in GELU's and
# attention's backward passes (43a0b3d). Per pass and thread count (1, 2) each build's gpt_train (12 steps,
# --profile-kernels; the order rotated every pass), then the peer with its OpenBLAS on the core
# the trainer chose. Then bench_kernels' touched kernels, 1 thread, each build.
#   bash measure.sh BASE_BUILD FUSED_BUILD NEW_BUILD PASSES > measure.log
set -u
base=$1; fused=$2; new=$3; passes=${4:-7}
here=$(cd "$(dirname "$0")" && pwd); src=$(cd "$here/../.." && pwd)
out=$here/raw; mkdir -p "$out"
# shellcheck source=../lib/base_new.sh
source "$here/../lib/base_new.sh"
base_new_passes gpt "$passes" "$out" "$src" "base=$base" "fused=$fused" "new=$new"
bench() {  # bench BUILD NAME
  OMP_NUM_THREADS=1 "$1/kernels/bench_kernels" \
    --benchmark_filter='BM_(attention|layernorm|gelu|adamw|sum_of_squares|matmul_backward)' --benchmark_min_time=0.3 \
    --benchmark_out="$out/bench_kernels-$2.json" --benchmark_out_format=json > /dev/null 2>&1 || echo "FAILED bench_kernels $2"
}
bench "$base" base
bench "$fused" fused
bench "$new" new
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
