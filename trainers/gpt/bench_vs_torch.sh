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
G=${1:-$here/../../build/release/trainers/gpt/gpt_train}
model=${2:-gpt-tiny} batch=${3:-8} steps=${4:-8}
shift $(( $# < 4 ? $# : 4 )) || true
threads=${*:-1 2}
[ -x "$G" ] || { echo "bench_vs_torch.sh: error: gpt_train not found at '$G'" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "# $model, batch $batch, $steps steps (first excluded), host $(hostname), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-22s %7s %14s %14s %8s %10s\n" impl threads "wall ms/step" "cpu ms/step" cpu/wall tokens/s
for t in $threads; do
  OMP_NUM_THREADS=$t "$G" -m "$model" -B "$batch" -s "$steps" --val-batches 0 -q -o "$tmp/sp$t.h5" >/dev/null
  /usr/bin/python3 - "$tmp/sp$t.h5" "$t" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1]) as f:
    s = f["steps"]; keep = s["in_summary"][:] == 1
    wall = s["step_wall_s"][:][keep]; cpu = s["step_process_cpu_s"][:][keep]
    print(f"{'scaleprobe gpt_train':<22} {sys.argv[2]:>7} {wall.mean()*1e3:>14.1f} {cpu.mean()*1e3:>14.1f} "
          f"{cpu.mean()/wall.mean():>8.2f} {f.attrs['tokens_per_s']:>10.0f}")
PY
  OMP_NUM_THREADS=$t /usr/bin/python3 "$here/bench_torch.py" --model "$model" --threads "$t" --batch "$batch" \
      --steps "$steps" > "$tmp/torch$t.json"
  /usr/bin/python3 - "$tmp/torch$t.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{r['impl']:<22} {r['threads']:>7} {r['wall_mean_s']*1e3:>14.1f} {r['cpu_mean_s']*1e3:>14.1f} "
      f"{r['cpu_mean_s']/r['wall_mean_s']:>8.2f} {r['tokens_per_s']:>10.0f}")
PY
done
