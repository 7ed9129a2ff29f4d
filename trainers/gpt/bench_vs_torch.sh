#!/usr/bin/env bash
# Training throughput of gpt_train against the same GPT-2 in PyTorch on the CPU, side by side.
#
#   trainers/gpt/bench_vs_torch.sh [gpt_train binary] [model] [batch] [steps] [threads...]
#   defaults: build/release/trainers/gpt/gpt_train gpt-tiny 8 8 "1 2"
#
# For each thread count: gpt_train (OMP_NUM_THREADS, which also sets the OpenBLAS threads) and
# bench_torch.py (OMP_NUM_THREADS + torch.set_num_threads), the same model, batch, sequence length
# (the context) and optimizer. Reports per step: wall and process CPU time (all threads), mean
# over the steps after the first (excluded by both), and tokens/s. On a shared machine compare
# cpu/wall too: below the thread count means the threads waited for cores.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../common/bench_vs_torch.sh"
name_width=22 rate=tokens_per_s rate_decimals=0
bench_setup gpt_train gpt-tiny 8 "$@"
for t in $threads; do
  OMP_NUM_THREADS=$t "$bin" -m "$model" -B "$batch" -s "$steps" --val-batches 0 -q -o "$tmp/sp$t.h5" >/dev/null
  trainer_row "$tmp/sp$t.h5" "scaleprobe gpt_train" "$t"
  torch_row "$t"
done
