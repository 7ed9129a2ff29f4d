#!/bin/bash
# Issue 30: SMPI's shared (timing-only) buffers as global blocks (SMPI's default: 64 MiB blocks of
# one file under /tmp mapped many times, scripts/simulate until this change) or as local segments
# (smpi/shared-malloc:local: one tmpfs segment per allocation site, mapped once per buffer). Same
# program, platform and simulated times expected; what differs is the CPU the simulation takes.
# ResNet-50's gradients (bucket_sweep --layout resnet50) on 32 hosts x 8 ranks of
# scripts/simulate's flat platform, one timed iteration, each variant twice, alternated:
#   mpi-all: SMPI's own MPI_Allreduce of the gradients as one buffer (-a mpi -c all)
#   ring:    our ring at the 25 MiB cap and as one buffer (-a ring -c 25,all)
#   bash measure.sh SMPI_BUILD > measure.log 2>&1
# Every time the benchmark prints is SIMULATED; /usr/bin/time's line is what this machine measured.
set -u
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd); src=$(cd "$here/../.." && pwd)
# shellcheck source=../lib/sim_platform.sh
source "$here/../lib/sim_platform.sh"
out=$here/raw; mkdir -p "$out"
echo "# start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2)"
echo "# git $(git -C "$src" rev-parse --short HEAD) $(smpirun -version 2>&1 | head -1); /tmp on $(findmnt -n -o FSTYPE -T /tmp), /dev/shm on $(findmnt -n -o FSTYPE -T /dev/shm)"
sim_platform "$src/scripts/simulate" "$out/platform-32" 32 "$build" > /dev/null
run() {  # NAME ALGORITHMS CAPS [extra --cfg...]
  local name=$1 algorithms=$2 caps=$3; shift 3
  local cfg=("${base_cfg[@]}" "$@")
  /usr/bin/time -f "$name: %U s user, %S s system, %e s real, %M KiB max RSS" \
    smpirun -np 256 -platform "$out/platform-32/platform.xml" -hostfile "$out/platform-32/hostfile" \
    "${cfg[@]/#/--cfg=}" --log=root.thres:warning --log=smpi_config.thres:error \
    "$build/bin/bucket_sweep" --layout resnet50 -c "$caps" -a "$algorithms" -n 1 -w 0 \
    -o "$out/$name.h5" > "$out/$name.log" 2>&1
  echo "$name: exit $?"
  grep -E '^ +(ring|rabenseifner|mpi) ' "$out/$name.log"; tail -1 "$out/$name.log"
}
for pass in 1 2; do
  run "mpi-all-global-$pass" mpi all
  run "mpi-all-local-$pass" mpi all smpi/shared-malloc:local
  run "ring-global-$pass" ring 25,all
  run "ring-local-$pass" ring 25,all smpi/shared-malloc:local
done
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
