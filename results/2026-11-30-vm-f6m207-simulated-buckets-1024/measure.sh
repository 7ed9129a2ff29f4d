#!/bin/bash
# Issue 30: the 1024-rank point of ../2026-11-29-vm-f6m207-simulated-buckets's bucket sweep
# (ResNet-50's gradients, caps 25 MiB and one buffer, one timed iteration, 128 hosts x 8 ranks on
# scripts/simulate's flat platform), its CPU time measured per run, and the same split in two runs:
# the ring alone, and Rabenseifner with SMPI's own MPI_Allreduce.
#   bash measure.sh SMPI_BUILD_DIR [all|ring|rab-mpi ...] > measure.log 2>&1
# Every time the benchmark prints is SIMULATED; the VM measures only the CPU each run takes.
set -u
build=$1; shift
here=$(cd "$(dirname "$0")" && pwd); src=$(cd "$here/../.." && pwd)
mkdir -p "$here/raw"
echo "# start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2)"
[ $# -gt 0 ] || set -- all ring rab-mpi
for what in "$@"; do
  case $what in
    all) algorithms=ring,rabenseifner,mpi ;;
    ring) algorithms=ring ;;
    rab-mpi) algorithms=rabenseifner,mpi ;;
    *) echo "measure.sh: unknown run '$what' (all, ring or rab-mpi)" >&2; exit 2 ;;
  esac
  /usr/bin/time -f "$what: %U s user, %S s system, %e s real, %M KiB max RSS" \
    "$src/scripts/simulate" --nodes 128 --ranks-per-node 8 --build "$build" bucket_sweep --layout resnet50 \
    -c 25,all -a "$algorithms" -n 1 -w 0 -o "$here/raw/$what.h5" > "$here/raw/$what.log" 2>&1
  echo "$what: exit $?"
  grep -E '^ +(ring|rabenseifner|mpi) ' "$here/raw/$what.log"; tail -1 "$here/raw/$what.log"
done
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
