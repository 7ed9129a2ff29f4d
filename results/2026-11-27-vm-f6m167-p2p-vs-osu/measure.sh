#!/bin/bash
# Issue 29: p2p_perf's latency, bw and bibw against OSU's osu_latency, osu_bw and osu_bibw and IMB's
# PingPong on the same Open MPI, 2 ranks on one node, interleaved pass by pass (the order flips
# every pass). Neither peer is in Debian: build them outside the tree (README.md says how).
#   bash measure.sh BUILD_DIR OSU_PT2PT_DIR IMB_MPI1 PASSES   (raw/ and measure.log here)
set -u
build=$1 osu=$2 imb=$3 passes=${4:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p raw
run() { mpirun -np 2 "$@"; }
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) $(grep -m1 'model name' /proc/cpuinfo)"
for p in $(seq 1 "$passes"); do
  for t in latency bw bibw; do
    ours() { run "$build/bin/p2p_perf" -t "$t" -b 4 -e 1M -q -o "raw/p2p-$t-p$p.h5" > "raw/p2p-$t-p$p.txt" || echo "FAILED p2p $t $p"; }
    theirs() { run "$osu/osu_$t" > "raw/osu-$t-p$p.txt" || echo "FAILED osu $t $p"; }
    if [ $((p % 2)) = 1 ]; then theirs; ours; else ours; theirs; fi
  done
  run "$imb" PingPong -msglog 2:20 > "raw/imb-pingpong-p$p.txt" || echo "FAILED imb $p"
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
