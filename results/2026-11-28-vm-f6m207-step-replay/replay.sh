#!/bin/bash
# The simulated side (SimGrid SMPI, the smpi preset's build): the on-node link calibrated from the
# measured ring (raw/calib-*), checked size by size; every measured gpt-tiny trace replayed like
# for like (its own rank count, one host); the 2-rank progress run of pass 1 replayed on 16, 64
# and 256 ranks (hosts of 8 ranks, scripts/simulate's 12.5 GB/s, 1 us host links) and, its 25 MiB
# case's first step only, on 1024. Real seconds and memory of each simulation in the log.
#   bash replay.sh > replay.log 2>&1     (sim/ here)
set -u
# replay_like_for_like and replay_scaled, shared with ../2026-11-29-vm-f6m207-step-replay-progress
# shellcheck source=../lib/step_replay.sh
. "$(dirname "$0")/../lib/step_replay.sh"
sim=../../scripts/simulate an=../../analysis/scaleprobe-analyze
timed() { /usr/bin/time -f "# real %e s, max RSS %M KB" "$@"; }
mkdir -p sim
$sim --nodes 1 --ranks-per-node 2 --node-latency 1us --node-bandwidth 1GBps allreduce_perf -a ring -b 64K -e 16M -f 4 \
  -n 3 -w 1 -q -o sim/reference.h5 > sim/reference.txt
$an calibrate raw sim/reference.h5 | tee sim/calibration.txt
cal=$(tail -1 sim/calibration.txt)
$sim --nodes 1 --ranks-per-node 2 $cal allreduce_perf -a ring -b 64K -e 16M -f 4 -n 3 -w 1 -q -o sim/calibrated.h5 \
  > sim/calibrated.txt
replay_like_for_like raw
replay_scaled raw
echo "== predicted: raw/gpt2-progress-p1.h5, case 1 (cap 25), one step, on 1024 ranks"
timed $sim --nodes 128 --ranks-per-node 8 $cal step_replay raw/gpt2-progress-p1.h5 --case 1 --steps 1 -q \
  -o sim/scale-1024.h5 | tee sim/scale-1024.txt
