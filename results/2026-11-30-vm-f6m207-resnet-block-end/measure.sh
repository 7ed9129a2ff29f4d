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
bench() {  # bench BUILD NAME
  OMP_NUM_THREADS=1 "$1/kernels/bench_kernels" --benchmark_filter='BM_(batchnorm|relu|residual)' --benchmark_min_time=0.3 \
    --benchmark_out="$out/bench_kernels-$2.json" --benchmark_out_format=json > /dev/null 2>&1 || echo "FAILED bench_kernels $2"
}
bench "$base" base
bench "$new" new
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
