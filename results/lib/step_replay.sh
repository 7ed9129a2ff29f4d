# Sourced by the replay.sh of 2026-11-28-vm-f6m207-step-replay and
# 2026-11-29-vm-f6m207-step-replay-progress (run from their folder; sim/ there). Each sets sim
# (scripts/simulate), cal (the calibrated on-node link's flags) and timed (how a simulation's time
# and memory are logged) before calling these.
# shellcheck shell=bash disable=SC2154  # sim and cal are the sourcing script's

# replay_like_for_like RAW: every measured gpt-tiny trace RAW/gpt2-*.h5 and RAW/gpt4-*.h5 replayed
# at its own rank count on one host: sim/like-NAME.h5, its output in sim/like-NAME.txt.
replay_like_for_like() {
  local f n ranks
  for f in "$1"/gpt2-*.h5 "$1"/gpt4-*.h5; do
    n=$(basename "$f" .h5); ranks=${n:3:1}
    echo "== like for like: $n on $ranks simulated ranks"
    timed $sim --nodes 1 --ranks-per-node "$ranks" $cal step_replay "$f" -q -o "sim/like-$n.h5" | tee "sim/like-$n.txt"
  done
}

# replay_scaled RAW: the 2-rank progress run of pass 1 (RAW/gpt2-progress-p1.h5, named as in the
# measuring folder, raw/) replayed for 4 steps on 16, 64 and 256 ranks, hosts of 8 ranks:
# sim/scale-N.h5 and .txt.
replay_scaled() {
  local nodes
  for nodes in 2 8 32; do
    echo "== predicted: raw/gpt2-progress-p1.h5 on $((nodes * 8)) ranks"
    timed $sim --nodes $nodes --ranks-per-node 8 $cal step_replay "$1/gpt2-progress-p1.h5" --steps 4 -q \
      -o "sim/scale-$((nodes * 8)).h5" | tee "sim/scale-$((nodes * 8)).txt"
  done
}
