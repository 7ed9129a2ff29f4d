#!/usr/bin/env bash
# Training throughput of gpt_train against the same GPT-2 in PyTorch on the CPU, side by side.
#
#   trainers/gpt/bench_vs_torch.sh [gpt_train binary] [model] [batch] [steps] [threads...]
#   defaults: build/release/trainers/gpt/gpt_train gpt-tiny 8 14 "1 2"
#
# For each thread count: gpt_train (OMP_NUM_THREADS, which also sets the OpenBLAS threads) and
# bench_torch.py (OMP_NUM_THREADS + torch.set_num_threads), the same model, batch, sequence length
# (the context) and optimizer, from the same initial weights (gpt_train --save-init, bench_torch.py
# --init). Reports per step the median and mean wall and the process CPU time (all threads) over
# the steps after the warm-up (the same steps excluded on both sides), tokens/s from the median
# and each side's first loss (trainers/common/bench_vs_torch.sh). On a shared machine compare
# cpu/wall too: below the thread count means the threads waited for cores.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../common/bench_vs_torch.sh"
name_width=22 rate=tokens_per_s per_step=tokens_per_step rate_decimals=0
bench_setup gpt_train gpt-tiny 8 "$@"
for t in $threads; do
  OMP_NUM_THREADS=$t OPENBLAS_NUM_THREADS=$t "$bin" -m "$model" -B "$batch" -s "$steps" --val-batches 0 -q \
      --save-init "$tmp/init$t.h5" -o "$tmp/sp$t.h5" >/dev/null
  trainer_row "$tmp/sp$t.h5" "scaleprobe gpt_train" "$t"
  torch_row "$t" "$tmp/init$t.h5"
done
