#!/bin/bash
# Simulated allreduce (SimGrid SMPI, the smpi preset's allreduce_perf through scripts/simulate) on
# flat clusters of 8 ranks per node: 2, 8, 32 nodes (16, 64, 256 ranks) at 8 B - 256 KiB (x8), and 128
# nodes (1024 ranks) at 8 B - 8 KiB; the ring's time against its closed form on 8 one-rank nodes.
# Every time in these traces is simulated (simulated = 1); the CPU time each point took is real.
#   bash measure.sh > measure.log 2>&1   (from this folder)
set -eu
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
sim="$root/scripts/simulate"
echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo) family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2) revision $(git -C "$root" rev-parse --short HEAD) load $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$here/traces"
for nodes in 2 8 32; do
  echo "## $((nodes * 8)) ranks ($nodes nodes x 8)"
  /usr/bin/time -f "# real %e s, max RSS %M KB" "$sim" --nodes $nodes --ranks-per-node 8 allreduce_perf -b 8 -e 1M -f 8 \
    -a mpi,naive,tree,ring,rabenseifner -n 3 -w 1 -o "$here/traces/allreduce-n$((nodes * 8)).h5"
done
echo "## 1024 ranks (128 nodes x 8)"
/usr/bin/time -f "# real %e s, max RSS %M KB" "$sim" --nodes 128 --ranks-per-node 8 allreduce_perf -b 8 -e 8K -f 32 \
  -a mpi,ring,rabenseifner -n 2 -w 1 -o "$here/traces/allreduce-n1024.h5"
echo "## ring closed form: 8 nodes x 1 rank, 1 MiB in one chunk"
"$sim" --nodes 8 --ranks-per-node 1 allreduce_perf --sizes 64K,1M,16M -a ring,mpi -n 2 -w 1 --chunk 16M -o "$here/traces/ring-8.h5"
echo "# end $(date -u +%FT%TZ)"
