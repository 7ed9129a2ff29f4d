#!/bin/bash
# The allreduce grid of results/2026-11-23-vm-cluster (nodes 1-4 x 1-2 ranks per virtual node,
# every algorithm, 64 KiB-4 MiB) SIMULATED on a flat platform whose two links are calibrated from
# that campaign's own ring at 2 ranks: the host link from its 2 ranks on 2 virtual nodes (TCP on
# loopback), the on-node link from its 2 ranks on one virtual node (shared memory). The other
# points are predictions. Real seconds of each simulation in the log.
#   bash simulate.sh > simulate.log 2>&1     (sim/ here; the smpi build in build/smpi)
set -eu
measured=../2026-11-23-vm-cluster
sim=../../scripts/simulate an=../../analysis/scaleprobe-analyze
mkdir -p sim/inter sim/intra
for p in j127002 p2_j127010 p3_j127018; do ln -sf "../../$measured/allreduce_N2_t1_c1_$p.h5" sim/inter/; done
for p in j127001 p2_j127009 p3_j127017; do ln -sf "../../$measured/allreduce_N1_t2_c1_$p.h5" sim/intra/; done
$sim --nodes 2 --ranks-per-node 1 --link-latency 1us --link-bandwidth 1GBps allreduce_perf -a ring --sizes 64K,1M,4M \
  -n 3 -w 1 -q -o sim/reference-inter.h5 > /dev/null
$sim --nodes 1 --ranks-per-node 2 --node-latency 1us --node-bandwidth 1GBps allreduce_perf -a ring --sizes 64K,1M,4M \
  -n 3 -w 1 -q -o sim/reference-intra.h5 > /dev/null
$an calibrate sim/inter sim/reference-inter.h5 | tee sim/calibration-inter.txt
$an calibrate sim/intra sim/reference-intra.h5 | tee sim/calibration-intra.txt
links="$(tail -1 sim/calibration-inter.txt) $(tail -1 sim/calibration-intra.txt)"
for nodes in 1 2 3 4; do
  for per in 1 2; do
    [ $((nodes * per)) -gt 1 ] || continue
    echo "== N${nodes} t${per}: $links"
    /usr/bin/time -f "# real %e s, user %U s" $sim --nodes $nodes --ranks-per-node $per $links allreduce_perf -a all \
      --sizes 64K,1M,4M -n 3 -w 1 -q -o "sim/allreduce_N${nodes}_t${per}.h5" > "sim/allreduce_N${nodes}_t${per}.txt"
  done
done
