#!/bin/bash
# Issue 28's MFU target: gpt_train's model FLOP/s (gpt-tiny, batch 8, 1 thread) against the fixed
# SGEMM probe — the best median of OpenBLAS, BLIS (its skx kernels forced: its own detection picks
# 'generic' on this CPU, ../2026-11-26-vm-f26m2-gemm-libraries) and oneDNN at n = 1024, one thread —
# interleaved per pass: probe, trainer, probe. Each library as Debian 12 ships it.
#   bash measure.sh BUILD_DIR PASSES > raw.tsv 2> measure.err
set -eu
build=${1:-../../build/release}; passes=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
g++ -O2 -std=c++20 -DUSE_OPENBLAS -I/usr/include/x86_64-linux-gnu/openblas-openmp "$here/sgemm_probe.cpp" -o /tmp/probe_openblas \
  -L/usr/lib/x86_64-linux-gnu/openblas-openmp -lopenblas -Wl,-rpath,/usr/lib/x86_64-linux-gnu/openblas-openmp
g++ -O2 -std=c++20 -DUSE_BLIS -I/usr/include/x86_64-linux-gnu/blis-openmp "$here/sgemm_probe.cpp" -o /tmp/probe_blis \
  -L/usr/lib/x86_64-linux-gnu/blis-openmp -lblis -Wl,-rpath,/usr/lib/x86_64-linux-gnu/blis-openmp -fopenmp
g++ -O2 -std=c++20 -DUSE_DNNL "$here/sgemm_probe.cpp" -o /tmp/probe_dnnl -ldnnl
export OMP_NUM_THREADS=1 BLIS_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
unset OPENBLAS_CORETYPE BLIS_ARCH_TYPE   # the VM exports OPENBLAS_CORETYPE=Haswell
# BLIS's kernels: skx unless BLIS_ARCH says otherwise; BLIS_ARCH=auto leaves BLIS to its own
# detection (on a CPU without AVX-512 the skx kernels would fault: ../2026-11-29-vm-f23m1-mfu).
blis_arch=${BLIS_ARCH:-skx}
echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo) family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2) load $(cut -d' ' -f1-3 /proc/loadavg)"
printf "pass\twhat\tlibrary\tn\tmedian_gflops\tmin_gflops\tmax_gflops\n"
probe() {
  /tmp/probe_openblas 1024 15 | sed "s/^/$1\tprobe\t/"
  if [ "$blis_arch" = auto ]; then /tmp/probe_blis 1024 15; else BLIS_ARCH_TYPE=$blis_arch /tmp/probe_blis 1024 15; fi |
    sed "s/^blis/$1\tprobe\tblis-$blis_arch/"
  /tmp/probe_dnnl 1024 15 | sed "s/^/$1\tprobe\t/"
}
mkdir -p raw
for p in $(seq 1 "$passes"); do
  probe "$p"
  "$build/trainers/gpt/gpt_train" -m gpt-tiny -B 8 --val-batches 0 --threads 1 -s 12 -q -o "raw/gpt-p$p.h5" > "raw/gpt-p$p.log" 2>&1
  printf "%s\ttrainer\tgpt_train\t-\t%s\t-\t-\n" "$p" "$(grep -o '[0-9.]* ms/iteration' "raw/gpt-p$p.log" | cut -d' ' -f1)"
  probe "$p"
done
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
