#!/bin/bash
# The simulated side of the step replay's validation on the 16-core GPU node's runs (raw/, measured
# by scripts/device/node-replay.sh): the on-node link calibrated twice, from the measured ring at 2
# ranks and at 16 (one host each), each checked size by size; every measured gpt-tiny trace
# replayed like for like (its own rank count, one host) on both links; and the 2-rank runs replayed
# on 8 and 16 ranks of one host (what the replay predicts for the node from its 2-rank run).
# Real and CPU seconds and memory of each simulation in the log.
#   bash replay.sh > replay.log 2>&1     (sim/ here; the smpi preset's build)
set -u
sim=../../scripts/simulate an=../../analysis/scaleprobe-analyze
timed() { /usr/bin/time -f "# real %e s, user %U s, sys %S s, max RSS %M KB" "$@"; }
ring=(allreduce_perf -a ring -b 64K -e 16M -f 4 -n 3 -w 1 -q)
mkdir -p sim
for np in 2 16; do
  echo "== calibration at $np ranks (raw/calib$np-p*.h5)"
  $sim --nodes 1 --ranks-per-node $np --node-latency 1us --node-bandwidth 1GBps "${ring[@]}" -o "sim/reference$np.h5" \
    > "sim/reference$np.txt"
  measured=$(mktemp -d)  # calibrate reads a folder of like-for-like traces: this rank count's only
  ln -s "$PWD"/raw/calib$np-p*.h5 "$measured/"
  $an calibrate "$measured" "sim/reference$np.h5" | tee "sim/calibration$np.txt"
  rm -rf "$measured"
  # shellcheck disable=SC2046  # the link's two flags
  $sim --nodes 1 --ranks-per-node $np $(tail -1 "sim/calibration$np.txt") "${ring[@]}" -o "sim/calibrated$np.h5" \
    > "sim/calibrated$np.txt"
done
for link in 2 16; do
  cal=$(tail -1 "sim/calibration$link.txt")
  for f in raw/gpt*.h5; do
    n=$(basename "$f" .h5); ranks=${n#gpt}; ranks=${ranks%%-*}
    echo "== like for like, link of $link ranks: $n on $ranks simulated ranks"
    # shellcheck disable=SC2086
    timed $sim --nodes 1 --ranks-per-node "$ranks" $cal step_replay "$f" -q -o "sim/like$link-$n.h5" | tee "sim/like$link-$n.txt"
  done
  for ranks in 8 16; do
    for f in raw/gpt2-auto-p*.h5; do
      n=$(basename "$f" .h5)
      echo "== predicted, link of $link ranks: $n on $ranks simulated ranks"
      # shellcheck disable=SC2086
      timed $sim --nodes 1 --ranks-per-node "$ranks" $cal step_replay "$f" -q -o "sim/scale$link-$ranks-$n.h5" \
        | tee "sim/scale$link-$ranks-$n.txt"
    done
  done
done
