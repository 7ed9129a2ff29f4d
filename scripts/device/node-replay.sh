#!/bin/bash
# The measured side of the step replay's validation on the 16-core node (issue 30): per pass,
#  - calib: the ring allreduce, 64 KiB-16 MiB, at 2 and at N ranks (N = nproc), the on-node link's
#    calibration at both ends of the replayed rank counts;
#  - gpt-tiny data-parallel, 8 rows per rank, 16 steps, ring buckets at caps 1 and 25 MiB cycled
#    step by step, at 2, N/2 and N ranks in the engine's automatic overlap mode (thread where a
#    spare core is left, progress where none), and at N ranks with --overlap none;
# each rank bound to one core with one thread, SP_PASSES passes (default 2), every trace kept.
# Then, here: `scaleprobe-analyze calibrate` on the calib traces and `step_replay` of each gpt trace
# (as results/2026-11-28-vm-f6m207-step-replay/replay.sh does for the VM's runs).
#
# On the GPU node (repository root; the bundle made here by
#   ../shared/device/make-bundle.sh build/release   carried as .device):
#     scripts/device/node-replay.sh
# Here, to try it (2 cores):  OUT=/tmp/node-replay SP_BIN=build/release/bin SP_RANKS=2 SP_STEPS=3 scripts/device/node-replay.sh
# Writes into $OUT: node-replay.tgz (node-replay/: node.txt, raw/ = every run's trace and printed
# output) and node-replay.log. No run starts after SP_BUDGET_S (default 80) seconds; each has
# SP_RUN_TIMEOUT_S (default 60).
# shellcheck disable=SC2154,SC2054  # raw comes from node_output; 1,25 is one argument
set -uo pipefail
t0=$(date +%s)
OUT=${OUT:?"OUT: the folder whose files come back"}
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
node_output node-replay
read -r -a ranks <<<"$(echo "${SP_RANKS:-2 $((n / 2)) $n}" | tr ',' ' ')"
budget=${SP_BUDGET_S:-80}
run_limit=${SP_RUN_TIMEOUT_S:-60}
gpt=("$SP_BIN/gpt_train" -m gpt-tiny -B 8 -s "${SP_STEPS:-16}" --val-batches 0 -a ring --bucket-cap-mb 1,25 -q)
run() {  # run NAME NP COMMAND...: raw/NAME.txt and raw/NAME.h5, unless the budget is spent
  local name=$1 np=$2; shift 2
  [ "$np" -gt "$n" ] && return 0
  if [ $(( $(date +%s) - t0 )) -ge "$budget" ]; then el "budget spent: $name not run"; return 0; fi
  timeout -k 5 "$run_limit" mpirun -np "$np" --bind-to core --map-by core "$@" -o "$raw/$name.h5" >"$raw/$name.txt" 2>&1
  el "$name: exit $?"
}
for p in $(seq 1 "${SP_PASSES:-2}"); do
  for np in $(printf '%s\n' 2 "$n" | sort -un); do
    run "calib$np-p$p" "$np" "$SP_BIN/allreduce_perf" -a ring -b 64K -e 16M -f 4 -q
  done
  for np in "${ranks[@]}"; do
    run "gpt$np-auto-p$p" "$np" "${gpt[@]}"
  done
  run "gpt$n-none-p$p" "$n" "${gpt[@]}" --overlap none
done
tar -czf "$OUT/node-replay.tgz" -C "$OUT" node-replay && rm -rf "$OUT/node-replay"
el "done: $OUT/node-replay.tgz ($(stat -c %s "$OUT/node-replay.tgz") bytes)"
