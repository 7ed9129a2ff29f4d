#!/bin/bash
# gpt-tiny's GEMMs by shape (batch 8, one thread): in the training step (a build of the revision
# given, patched with instrument-gemm-shapes.patch to time every sgemm call by shape), against the
# same shapes alone in oneDNN and OpenBLAS (Cooperlake core), with the caches flushed before
# each call ("cold") and without ("hot"), and attention's per-head GEMMs against one batched
# oneDNN matmul primitive per layer.
#   bash measure.sh REVISION > measure.log   (from this folder; ~4 minutes on 2 cores)
set -eu
rev=${1:-HEAD}; here=$(cd "$(dirname "$0")" && pwd); root=$(git -C "$here" rev-parse --show-toplevel)
work=$(mktemp -d); trap 'git -C "$root" worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$root" worktree add -q --detach "$work/src" "$rev"
git -C "$work/src" apply "$here/instrument-gemm-shapes.patch"
cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O3 -g1 -DNDEBUG" -DSCALEPROBE_BUILD_TESTS=OFF -DSCALEPROBE_BUILD_BENCHMARKS=OFF > "$work/cmake.log"
cmake --build "$work/build" -j2 --target gpt_train > "$work/build.log"
g++ -O2 -std=c++20 "$here/shapes_probe.cpp" -o "$work/shapes_probe" -ldnnl -I/usr/include/x86_64-linux-gnu/openblas-openmp \
  -L/usr/lib/x86_64-linux-gnu/openblas-openmp -lopenblas -Wl,-rpath,/usr/lib/x86_64-linux-gnu/openblas-openmp
g++ -O2 -std=c++20 "$here/attention_batched.cpp" -o "$work/attention_batched" -ldnnl
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=Cooperlake
echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo) family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2) revision $(git -C "$root" rev-parse --short "$rev") load $(cut -d' ' -f1-3 /proc/loadavg)"
for pass in 1 2 3; do
  echo "## pass $pass: in the step (gpt_train -m gpt-tiny -B 8 --threads 1 -s 12)"
  "$work/build/trainers/gpt/gpt_train" -m gpt-tiny -B 8 --val-batches 0 --threads 1 -s 12 -q -o "$work/t.h5" 2>&1 | grep -E '^GEMM|tokens/s'
  echo "## pass $pass: alone, caches flushed"; "$work/shapes_probe" 1
  echo "## pass $pass: alone, hot"; "$work/shapes_probe" 0
done
echo "## attention: batched matmul primitive against per-head sgemm"; "$work/attention_batched"
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
