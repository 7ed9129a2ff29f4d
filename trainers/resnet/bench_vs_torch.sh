#!/usr/bin/env bash
# Training throughput of resnet_train against the same ResNet in PyTorch on the CPU, side by side.
#
#   trainers/resnet/bench_vs_torch.sh [resnet_train binary] [model] [batch] [steps] [threads...]
#   defaults: build/release/trainers/resnet/resnet_train resnet20 32 8 "1 2"
#
# For each thread count: resnet_train (OMP_NUM_THREADS, which also sets the OpenBLAS threads) on
# the synthetic images and bench_torch.py (OMP_NUM_THREADS + torch.set_num_threads) on random
# images, the same model, batch (32x32 images, BN in training mode) and optimizer (SGD, momentum
# 0.9, weight decay 5e-4). Reports per step: wall and process CPU time (all threads), mean over
# the steps after the first (excluded by both), and images/s. resnet_train's step includes its
# data loading (normalising the batch, ~1% of a step); PyTorch's does not. On a shared machine
# compare cpu/wall too: below the thread count means the threads waited for cores.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
R=${1:-$here/../../build/release/trainers/resnet/resnet_train}
model=${2:-resnet20} batch=${3:-32} steps=${4:-8}
shift $(( $# < 4 ? $# : 4 )) || true
threads=${*:-1 2}
[ -x "$R" ] || { echo "bench_vs_torch.sh: error: resnet_train not found at '$R'" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "# $model, batch $batch, $steps steps (first excluded), host $(hostname), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-24s %7s %14s %14s %8s %10s\n" impl threads "wall ms/step" "cpu ms/step" cpu/wall images/s
for t in $threads; do
  OMP_NUM_THREADS=$t "$R" -m "$model" -B "$batch" -s "$steps" --synthetic-images $((batch * steps)) --synthetic-test 1 \
      --val-images 0 -q -o "$tmp/sp$t.h5" >/dev/null
  /usr/bin/python3 - "$tmp/sp$t.h5" "$t" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1]) as f:
    s = f["steps"]; keep = s["in_summary"][:] == 1
    wall = s["step_wall_s"][:][keep]; cpu = s["step_process_cpu_s"][:][keep]
    print(f"{'scaleprobe resnet_train':<24} {sys.argv[2]:>7} {wall.mean()*1e3:>14.1f} {cpu.mean()*1e3:>14.1f} "
          f"{cpu.mean()/wall.mean():>8.2f} {f.attrs['images_per_s']:>10.1f}")
PY
  OMP_NUM_THREADS=$t /usr/bin/python3 "$here/bench_torch.py" --model "$model" --threads "$t" --batch "$batch" \
      --steps "$steps" > "$tmp/torch$t.json"
  /usr/bin/python3 - "$tmp/torch$t.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{r['impl']:<24} {r['threads']:>7} {r['wall_mean_s']*1e3:>14.1f} {r['cpu_mean_s']*1e3:>14.1f} "
      f"{r['cpu_mean_s']/r['wall_mean_s']:>8.2f} {r['images_per_s']:>10.1f}")
PY
done
