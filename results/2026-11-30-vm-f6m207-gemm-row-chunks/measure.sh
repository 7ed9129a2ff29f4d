#!/bin/bash
# Would gpt-tiny's linear-layer backward gain from running its two GEMMs per chunk of rows?
# row_chunks.cpp against oneDNN (the trainers' GEMM library on AVX-512 CPUs), one thread, 3 passes.
#   bash measure.sh > measure.log   (from this folder; about a minute)
set -eu
here=$(cd "$(dirname "$0")" && pwd); work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
g++ -O2 -std=c++20 "$here/row_chunks.cpp" -o "$work/row_chunks" -ldnnl
export OMP_NUM_THREADS=1
echo "# $(date -u +%FT%TZ)$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) family$(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model$(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2) oneDNN $(dpkg-query -W -f='${Version}' libdnnl-dev 2>/dev/null) load $(cut -d' ' -f1-3 /proc/loadavg)"
for pass in 1 2 3; do echo "## pass $pass"; "$work/row_chunks"; done
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
