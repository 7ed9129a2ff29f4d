#!/bin/bash
# oneDNN's dnnl_sgemm (the trainers' GEMM call) against oneDNN's matmul primitive (made once per
# shape, strides for the transposes, a sum post-op for beta = 1) on gpt-tiny's GEMM shapes, one
# thread, median of 21 calls each: hot (the same operands again) and with a 256 MiB pass over
# memory before every call (cold). Three passes.
#   bash measure.sh > measure.log
set -eu
here=$(cd "$(dirname "$0")" && pwd)
g++ -O2 -std=c++20 "$here/matmul_probe.cpp" -o /tmp/matmul_probe -ldnnl
echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2) load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in 1 2 3; do
  echo "## pass $p: hot"; OMP_NUM_THREADS=1 /tmp/matmul_probe 0
  echo "## pass $p: cold"; OMP_NUM_THREADS=1 /tmp/matmul_probe 1
done
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
