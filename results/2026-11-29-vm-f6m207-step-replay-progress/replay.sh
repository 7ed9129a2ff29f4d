#!/bin/bash
# The step replay with the engine's progress calls charged (a3d990f), on the measured runs and the
# calibrated on-node link of results/2026-11-28-vm-f6m207-step-replay (its raw/ and
# sim/calibration.txt; nothing measured again): every measured gpt-tiny trace replayed like for
# like (its own rank count, one host), and the 2-rank progress run of pass 1 replayed on 16, 64
# and 256 ranks (hosts of 8 ranks, scripts/simulate's 12.5 GB/s, 1 us host links). Real and CPU
# seconds and memory of each simulation in the log.
#   bash replay.sh > replay.log 2>&1     (sim/ here)
set -u
before=../2026-11-28-vm-f6m207-step-replay
sim=../../scripts/simulate
timed() { /usr/bin/time -f "# real %e s, user %U s, sys %S s, max RSS %M KB" "$@"; }
mkdir -p sim
cal=$(tail -1 $before/sim/calibration.txt)
echo "# calibrated on-node link ($before/sim/calibration.txt): $cal"
for f in $before/raw/gpt2-*.h5 $before/raw/gpt4-*.h5; do
  n=$(basename "$f" .h5); ranks=${n:3:1}
  echo "== like for like: $n on $ranks simulated ranks"
  timed $sim --nodes 1 --ranks-per-node "$ranks" $cal step_replay "$f" -q -o "sim/like-$n.h5" | tee "sim/like-$n.txt"
done
for nodes in 2 8 32; do
  echo "== predicted: raw/gpt2-progress-p1.h5 on $((nodes * 8)) ranks"
  timed $sim --nodes $nodes --ranks-per-node 8 $cal step_replay $before/raw/gpt2-progress-p1.h5 --steps 4 -q \
    -o "sim/scale-$((nodes * 8)).h5" | tee "sim/scale-$((nodes * 8)).txt"
done
