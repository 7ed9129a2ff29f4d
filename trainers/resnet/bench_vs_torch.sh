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
. "$here/../common/bench_vs_torch.sh"
name_width=24 rate=images_per_s per_step=images_per_step rate_decimals=1
bench_setup resnet_train resnet20 32 "$@"
for t in $threads; do
  OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t "$bin" -m "$model" -B "$batch" -s "$steps" \
      --synthetic-images $((batch * steps)) --synthetic-test 1 --val-images 0 -q --save-init "$tmp/init$t.h5" \
      -o "$tmp/sp$t.h5" >/dev/null
  trainer_row "$tmp/sp$t.h5" "scaleprobe resnet_train" "$t"
  torch_row "$t" "$tmp/init$t.h5"
done
