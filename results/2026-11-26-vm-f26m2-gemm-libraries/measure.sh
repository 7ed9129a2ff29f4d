#!/bin/bash
# gemm_bench.cpp built against each library (Debian 12's: OpenBLAS 0.3.21 openmp, BLIS 0.9.0 openmp,
# oneDNN 2.6.3), one thread each, the three binaries interleaved per pass. BLIS's own detection
# picks its 'generic' sub-configuration on this CPU (BLIS_ARCH_DEBUG=1 says so): it is run both
# ways. OpenBLAS on its own detection (the VM's OPENBLAS_CORETYPE=Haswell removed).
#   bash measure.sh PASSES > raw.tsv
set -eu
passes=${1:-3}
g++ -O2 -std=c++20 -DUSE_OPENBLAS -I/usr/include/x86_64-linux-gnu/openblas-openmp gemm_bench.cpp -o /tmp/gb_openblas \
  -L/usr/lib/x86_64-linux-gnu/openblas-openmp -lopenblas -Wl,-rpath,/usr/lib/x86_64-linux-gnu/openblas-openmp
g++ -O2 -std=c++20 -DUSE_BLIS -I/usr/include/x86_64-linux-gnu/blis-openmp gemm_bench.cpp -o /tmp/gb_blis \
  -L/usr/lib/x86_64-linux-gnu/blis-openmp -lblis -Wl,-rpath,/usr/lib/x86_64-linux-gnu/blis-openmp -fopenmp
g++ -O2 -std=c++20 -DUSE_DNNL gemm_bench.cpp -o /tmp/gb_dnnl -ldnnl
export OMP_NUM_THREADS=1 BLIS_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
unset OPENBLAS_CORETYPE BLIS_ARCH_TYPE
echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo) family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2) load $(cut -d' ' -f1-3 /proc/loadavg)"
printf "library\tpass\tshape\tM\tN\tK\tgflops\n"
for p in $(seq 1 "$passes"); do
  /tmp/gb_openblas 1 | sed "s/\t1\t/\t$p\t/"
  /tmp/gb_blis 1 | sed "s/^blis\t1\t/blis-generic\t$p\t/"
  BLIS_ARCH_TYPE=skx /tmp/gb_blis 1 | sed "s/^blis\t1\t/blis-skx\t$p\t/"
  /tmp/gb_dnnl 1 | sed "s/\t1\t/\t$p\t/"
done
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
