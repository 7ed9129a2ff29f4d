#!/bin/bash
# SIMULATED: ring and Rabenseifner allreduce of the smpi preset's allreduce_perf on flat clusters of
# one rank per host (every message crosses two host links: alpha = 1 us per link, beta = 12.5 GB/s),
# at 64, 256 and 1024 simulated ranks, private (verified) buffers of at most 1 MiB, to compare with
# the alpha-beta closed forms (summarize.py). The CPU time each simulation took is real (time -v).
#   bash measure.sh [BUILD] > measure.log 2>&1   (from this folder; BUILD defaults to build/smpi)
set -eu
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
build=${1:-$root/build/smpi}
sim="$root/scripts/simulate"
echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo) family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2) revision $(git -C "$root" rev-parse --short HEAD) load $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$here/traces"
run() {  # ranks sizes
  echo "## $1 ranks ($1 hosts x 1 rank), sizes $2"
  /usr/bin/time -v nice -n 10 "$sim" --build "$build" --nodes "$1" --ranks-per-node 1 allreduce_perf \
    --sizes "$2" -a ring,rabenseifner -n 3 -w 1 -o "$here/traces/closed-form-n$1.h5" 2> "$here/time-n$1.txt"
  grep -E 'User time|System time|Elapsed|Maximum resident' "$here/time-n$1.txt" | sed 's/^\s*/# /'
}
run 64 64K,256K,1M
run 256 64K,256K,1M
run 1024 256K,1M
echo "# end $(date -u +%FT%TZ)"
