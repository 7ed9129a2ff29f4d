# Sourced by the measure.sh of 2026-11-30-vm-f23m1-conv-weight-rows and
# 2026-11-30-vm-f6m207-resnet-block-end (run from anywhere; raw/ beside the sourcing script).
# base_new_resnet_passes BASE_BUILD NEW_BUILD PASSES OUT SRC: per pass and thread count (1, 2) the
# base build's resnet_train, the new build's (ResNet-20, batch 32, 12 steps, --profile-kernels;
# the order of base and new alternating per pass), then the PyTorch peer with its OpenBLAS on the
# core the trainer chose; OUT/resnet-tT-WHO-pP.{h5,log} and OUT/torch-tT-pP.{json,err}.
# shellcheck shell=bash

base_new_resnet_passes() {
  local base=$1 new=$2 passes=$3 out=$4 src=$5 p t who bin name order core
  unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE SCALEPROBE_GEMM SCALEPROBE_CONV   # the VM exports OPENBLAS_CORETYPE
  local cpu
  cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) family$(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2)"
  cpu+=" model$(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2)"
  echo "# start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) cpu$cpu"
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
}
