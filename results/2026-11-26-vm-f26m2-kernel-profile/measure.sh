#!/bin/bash
# Issue 28's first item: where a training step's compute goes, kernel by kernel, beside PyTorch's
# per-op profile of the same model on the same CPU. Per pass, thread count and model: the trainer
# with --profile-kernels (one rank, no communication) and the PyTorch peer (scaleprobe_peers.*_torch)
# unprofiled (the speed ratio) and under torch.profiler (its per-op self time), interleaved. The
# peer's OpenBLAS gets the core the trainer chose (like for like: Debian's PyTorch 1.13 runs its
# GEMMs through the same OpenBLAS).
#   bash measure.sh BUILD_DIR OUT_DIR PASSES
set -u
build=${1:-../../build/release}; out=${2:-raw}; passes=${3:-3}
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
# The VM exports OPENBLAS_CORETYPE=Haswell: the trainer's own choice instead (kernels/blas_core).
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
declare -A ours=([gpt]="$build/trainers/gpt/gpt_train -m gpt-tiny -B 8 --val-batches 0"
                 [resnet]="$build/trainers/resnet/resnet_train -m resnet20 -B 32 --val-images 0")
declare -A peer=([gpt]="-m scaleprobe_peers.gpt_torch --model gpt-tiny --batch 8"
                 [resnet]="-m scaleprobe_peers.resnet_torch --model resnet20 --batch 32")
steps=12
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $(seq 1 "$passes"); do
  for t in 1 2; do
    for m in gpt resnet; do
      name="$m-t$t-p$p"
      OMP_NUM_THREADS=$t ${ours[$m]} --threads "$t" -s $steps -q --profile-kernels -o "$out/$name.h5" > "$out/$name.log" 2>&1 \
        || { echo "FAILED $name"; tail -3 "$out/$name.log"; }
      core=$(grep -o 'core=[A-Za-z0-9]*' "$out/$name.log" | head -1 | cut -d= -f2)
      for mode in plain profile; do
        flag=""; [ $mode = profile ] && flag=--profile
        OPENBLAS_CORETYPE=$core OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t PYTHONPATH="$src/python" \
          /usr/bin/python3 ${peer[$m]} --threads "$t" --steps $steps $flag > "$out/torch-$name-$mode.json" 2> "$out/torch-$name-$mode.err" \
          || { echo "FAILED torch $name $mode"; tail -3 "$out/torch-$name-$mode.err"; }
      done
    done
  done
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
