#!/bin/bash
# Builds panel_probe.cpp against Debian's oneDNN and runs it three times, one thread.
#   bash measure.sh > measure.log
set -eu
g++ -O3 -march=x86-64-v4 -ffp-contract=fast panel_probe.cpp -o /tmp/panel_probe -ldnnl
{ lscpu; grep -m1 '^flags' /proc/cpuinfo; dpkg-query -W libdnnl-dev 2>/dev/null || true; } > machine.txt
for pass in 1 2 3; do
  echo "pass $pass $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
  OMP_NUM_THREADS=1 /tmp/panel_probe
done
