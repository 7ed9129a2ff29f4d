#!/bin/bash
# Issue 28: gpt-tiny (batch 8) before and after a change, interleaved with the PyTorch peer.
# Per pass and thread count (1, 2): the base build's gpt_train, this build's, then
# python -m scaleprobe_peers.gpt_torch (its OpenBLAS on the core the trainer chose, as the
# kernel-profile campaigns do); 12 steps each, the median step after the first. Every pass is printed.
#   bash measure.sh BASE_BUILD NEW_BUILD PASSES > measure.log
set -u
base=$1; new=$2; passes=${3:-5}
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$(dirname "$0")/raw; mkdir -p "$out"
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE   # the VM exports OPENBLAS_CORETYPE=Haswell
echo "# start $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2) load $(cut -d' ' -f1-3 /proc/loadavg)"
printf "pass\tthreads\tbase_tokens_per_s\tnew_tokens_per_s\ttorch_tokens_per_s\tbase_revision\tnew_revision\n"
for p in $(seq 1 "$passes"); do
  for t in 1 2; do
    for who in base new; do
      bin=$base; [ $who = new ] && bin=$new
      OMP_NUM_THREADS=$t "$bin/trainers/gpt/gpt_train" -m gpt-tiny -B 8 --val-batches 0 --threads "$t" -s 12 -q \
        -o "$out/$who-t$t-p$p.h5" > "$out/$who-t$t-p$p.log" 2>&1 || { echo "FAILED $who t$t p$p"; exit 1; }
    done
    core=$(grep -o 'core=[A-Za-z0-9]*' "$out/new-t$t-p$p.log" | head -1 | cut -d= -f2)
    OPENBLAS_CORETYPE=$core OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t PYTHONPATH="$src/python" \
      /usr/bin/python3 -m scaleprobe_peers.gpt_torch --model gpt-tiny --batch 8 --threads "$t" --steps 12 \
      > "$out/torch-t$t-p$p.json" 2> "$out/torch-t$t-p$p.err" \
      || { echo "FAILED torch t$t p$p"; exit 1; }
    rate() { grep -o '^# [0-9]* tokens/s' "$1" | grep -o '[0-9]*' | head -1; }
    rev() { /usr/bin/python3 -c 'import h5py,sys; v=h5py.File(sys.argv[1])["provenance"].attrs["git_revision"]; print(v.decode() if isinstance(v,bytes) else v)' "$1"; }
    torch=$(/usr/bin/python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["tokens_per_s"], 1))' "$out/torch-t$t-p$p.json")
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$p" "$t" "$(rate "$out/base-t$t-p$p.log")" "$(rate "$out/new-t$t-p$p.log")" "$torch" \
      "$(rev "$out/base-t$t-p$p.h5")" "$(rev "$out/new-t$t-p$p.h5")"
  done
done
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
