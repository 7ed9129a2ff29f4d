#!/bin/bash
# Every collective of collective_perf, every algorithm against the MPI library's own call in the same
# run (vs_mpi), 2 ranks on this machine, PASSES passes with the collectives' order rotated each pass.
#   bash measure.sh BUILD_DIR PASSES   (raw/ and measure.log here)
set -u
build=$1 passes=${2:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p raw
collectives=(reduce_scatter all_gather broadcast reduce all_to_all all_to_allv)
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) $(grep -m1 'model name' /proc/cpuinfo)"
for p in $(seq 1 "$passes"); do
  for k in "${!collectives[@]}"; do
    c=${collectives[$(( (k + p - 1) % ${#collectives[@]} ))]}
    extra=()
    [ "$c" = all_to_allv ] && extra=(--imbalance 0.5)
    mpirun -np 2 "$build/bin/collective_perf" -c "$c" "${extra[@]}" -a all --sizes 1K,64K,1M,16M --no-membw -q \
      -o "raw/$c-p$p.h5" > "raw/$c-p$p.txt" || echo "FAILED $c $p"
  done
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
