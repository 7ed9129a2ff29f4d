#!/usr/bin/env bash
# Same-run comparison: allreduce_perf before the transport layer (OLD build) and after it (NEW),
# 2 ranks, every algorithm, 8 B - 4 MiB, interleaved passes (order alternates), JSON per pass.
set -euo pipefail
OLD=$1 NEW=$2 OUT=$3 PASSES=${PASSES:-5}
mkdir -p "$OUT/raw"
# The HDF5 traces (5.6 MB a pass) are not kept: the JSON holds every summary row and the provenance.
TRACES=$(mktemp -d); trap 'rm -rf "$TRACES"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
run() {  # run SIDE PASS
  local bin=$OLD; [ "$1" = new ] && bin=$NEW
  mpirun -np 2 --bind-to core "$bin" -a all -b 8 -e 4M -f 4 --no-membw -q \
    -o "$TRACES/$1_p$2.h5" --json "$OUT/raw/$1_p$2.json" > "$OUT/raw/$1_p$2.txt"
}
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)" > "$OUT/raw/load.txt"
for p in $(seq 1 "$PASSES"); do
  if [ $((p % 2)) = 1 ]; then run old "$p"; run new "$p"; else run new "$p"; run old "$p"; fi
done
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/raw/load.txt"
