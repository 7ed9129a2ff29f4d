#!/bin/bash
# Issue 32's timed checks on the GPU node's 16 cores, each rank bound to one core with one thread:
#   1. the bubble against (S - 1) / (M + S - 1) with balanced stages: gpt-tiny at --depth 8 (its
#      byte vocabulary makes the head about a twelfth of a block), global batch 32; 4 stages of two
#      blocks with M = 4, 8, 16 and 8 stages of one block with M = 8, 16, GPipe and 1F1B;
#   2. data parallel, pipeline and hybrid gpt-mini at 4 ranks (the points of
#      jobs/campaigns/vm-parallelism.toml, which ran there oversubscribed: here timed) and at 16
#      (data parallel x16, hybrid 2x8 and 4x4, M = 8, both schedules).
# SP_PASSES (2) passes, the points interleaved within each; no run starts after SP_BUDGET_S (300) s;
# SP_ONLY, a regular expression, keeps the points whose names match (tests).
#
# On the GPU node (repository root; the bundle made here by
#   ../shared/device/make-bundle.sh build/release   carried as .device):
#     scripts/device/node-pipeline.sh
# Here, to try it (2 cores: every point oversubscribed, fewer steps):
#     OUT=/tmp/node-pipeline SP_BIN=build/release/bin SP_STEPS=2 SP_PASSES=1 scripts/device/node-pipeline.sh
# Writes into $OUT: node-pipeline.tgz (node-pipeline/: node.txt, raw/ = every run's trace and log) and
# node-pipeline.log. Then, here: analysis/scaleprobe-analyze report on the unpacked raw/ (its
# "training parallelism" and pipeline sections), stored as results/<date>-<node>-pipeline.
set -uo pipefail
t0=$(date +%s)
OUT=${OUT:?"OUT: the folder whose files come back"}
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
node_output node-pipeline
budget=${SP_BUDGET_S:-300}
passes=${SP_PASSES:-2}
steps=${SP_STEPS:-6}
bind=(--bind-to core)
[ "$n" -lt 16 ] && bind=(--bind-to none --oversubscribe)  # here: the points share the cores
# Each run's trace says which pass it was and how it was launched (the report's point grouping).
export SCALEPROBE_LAUNCHER=mpirun

# run NAME RANKS GPT_TRAIN_ARGS...: one run, its log in raw/NAME_pP.log, its exit status printed.
run() {
  local name=$1 ranks=$2; shift 2
  [[ "$name" =~ ${SP_ONLY:-.} ]] || return 0
  if [ $(($(date +%s) - t0)) -ge "$budget" ]; then el "budget spent: $name not run"; return; fi
  SCALEPROBE_PASS=$pass timeout -k 5 90 mpirun -np "$ranks" "${bind[@]}" \
    -x SCALEPROBE_PASS -x SCALEPROBE_LAUNCHER "$SP_BIN/gpt_train" "$@" -s "$steps" --val-batches 0 --threads 1 -q \
    --scaling strong -o "$raw/${name}_p$pass.h5" >"$raw/${name}_p$pass.log" 2>&1
  el "$name pass $pass ($ranks ranks): exit $?"
}

for pass in $(seq 1 "$passes"); do
  el "1. bubble, balanced stages (gpt-tiny --depth 8, global batch 32), pass $pass"
  for sm in 4:4 4:8 4:16 8:8 8:16; do
    S=${sm%:*} M=${sm#*:}
    for schedule in gpipe 1f1b; do
      run "bubble_s${S}_m${M}_$schedule" "$S" -m gpt-tiny --depth 8 -B 32 \
        --pipeline-stages "$S" --micro-batches "$M" --schedule "$schedule"
    done
  done
  el "2. data parallel, pipeline and hybrid gpt-mini, pass $pass"
  mini=(-m gpt-mini -a ring --bucket-cap-mb 25)
  run dp_t4 4 "${mini[@]}" -B 16
  run dp_t16 16 "${mini[@]}" -B 64
  for schedule in gpipe 1f1b; do
    run "pp4_m8_${schedule}_t4" 4 "${mini[@]}" -B 16 --pipeline-stages 4 --micro-batches 8 --schedule "$schedule"
    run "pp2_m8_${schedule}_t4" 4 "${mini[@]}" -B 16 --pipeline-stages 2 --micro-batches 8 --schedule "$schedule"
    run "pp2_m8_${schedule}_t16" 16 "${mini[@]}" -B 64 --pipeline-stages 2 --micro-batches 8 --schedule "$schedule"
    run "pp4_m8_${schedule}_t16" 16 "${mini[@]}" -B 64 --pipeline-stages 4 --micro-batches 8 --schedule "$schedule"
  done
done

tar czf "$OUT/node-pipeline.tgz" -C "$OUT" node-pipeline
size=$(stat -c %s "$OUT/node-pipeline.tgz")
el "$OUT/node-pipeline.tgz: $size bytes$([ "$size" -gt 16000000 ] && echo ' — OVER the 16 MiB a file may bring back')"
rm -rf "$OUT/node-pipeline"
