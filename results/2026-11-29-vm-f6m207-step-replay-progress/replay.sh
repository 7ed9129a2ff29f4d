#!/bin/bash
# The step replay with the engine's progress calls charged (a3d990f), on the measured runs and the
# calibrated on-node link of results/2026-11-28-vm-f6m207-step-replay (its raw/ and
# sim/calibration.txt; nothing measured again): every measured gpt-tiny trace replayed like for
# like (its own rank count, one host), and the 2-rank progress run of pass 1 replayed on 16, 64
# and 256 ranks (hosts of 8 ranks, scripts/simulate's 12.5 GB/s, 1 us host links). Real and CPU
# seconds and memory of each simulation in the log.
#   bash replay.sh > replay.log 2>&1     (sim/ here)
set -u
# replay_like_for_like and replay_scaled, as ../2026-11-28-vm-f6m207-step-replay replays
# shellcheck source=../lib/step_replay.sh
. "$(dirname "$0")/../lib/step_replay.sh"
before=../2026-11-28-vm-f6m207-step-replay
sim=../../scripts/simulate
timed() { /usr/bin/time -f "# real %e s, user %U s, sys %S s, max RSS %M KB" "$@"; }
mkdir -p sim
cal=$(tail -1 $before/sim/calibration.txt)
echo "# calibrated on-node link ($before/sim/calibration.txt): $cal"
replay_like_for_like $before/raw
replay_scaled $before/raw
