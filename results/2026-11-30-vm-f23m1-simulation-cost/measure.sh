#!/bin/bash
# Issue 30: what the 1024-rank ring bucket sweep costs on this CPU, and whether SimGrid settings that
# keep the simulated times make it cheaper. ResNet-50's gradients (bucket_sweep --layout resnet50) as
# one buffer, ring, one timed iteration (a simulation is deterministic), on scripts/simulate's flat
# platform of 8-rank hosts:
#  - 256 ranks, scripts/simulate's own configuration (base), then the same with one change each:
#    smpi/shared-malloc:global; the backbone FATPIPE (it never binds: it has every host link's
#    bandwidth summed); smpi/async-small-thresh and smpi/send-is-detached-thresh at 1 MB;
#  - 1024 ranks, base, under perf record (where the CPU time goes, by library).
# The base configuration is scripts/simulate's at this revision (its `config` list), copied into ../lib/sim_platform.sh (with the platform writer).
#   bash measure.sh SMPI_BUILD > measure.log 2>&1
set -u
build=$1
here=$(cd "$(dirname "$0")" && pwd); src=$(cd "$here/../.." && pwd)
# shellcheck source=../lib/sim_platform.sh
source "$here/../lib/sim_platform.sh"
out=$here/raw; mkdir -p "$out"
echo "# start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2) model $(grep -m1 '^model\s' /proc/cpuinfo | cut -d: -f2)"
run() {  # run NAME NODES PLATFORM_DIR [extra --cfg values] [-- prefix command]
  local name=$1 nodes=$2 dir=$3; shift 3
  local cfg=("${base_cfg[@]}") prefix=()
  while [ $# -gt 0 ]; do
    if [ "$1" = -- ]; then shift; prefix=("$@"); break; fi
    cfg+=("$1"); shift
  done
  SCALEPROBE_SIM_PLATFORM="flat cluster: $nodes nodes x 8 ranks ($name)" \
    /usr/bin/time -f "$name: %U s user, %S s system, %e s real, %M KiB max RSS" "${prefix[@]}" \
    smpirun -np $((nodes * 8)) -platform "$dir/platform.xml" -hostfile "$dir/hostfile" "${cfg[@]/#/--cfg=}" \
    --log=root.thres:warning --log=smpi_config.thres:error "$build/bin/bucket_sweep" --layout resnet50 -c all \
    -a ring -n 1 -w 0 -o "$out/$name.h5" > "$out/$name.log" 2>&1
  grep -E '^ +ring ' "$out/$name.log"; tail -1 "$out/$name.log"
}
for nodes in 32 128; do  # the platform and host file scripts/simulate writes (its run itself left out)
  sim_platform "$src/scripts/simulate" "$out/platform-$nodes" "$nodes" "$build"
done
cp -r "$out/platform-32" "$out/platform-32-fatpipe"
sed -i 's/bb_lat="0s"/bb_lat="0s" bb_sharing_policy="FATPIPE"/' "$out/platform-32-fatpipe/platform.xml"
run r256-base 32 "$out/platform-32"
run r256-shared-malloc-global 32 "$out/platform-32" smpi/shared-malloc:global
run r256-backbone-fatpipe 32 "$out/platform-32-fatpipe"
run r256-detached-1MB 32 "$out/platform-32" smpi/async-small-thresh:1000000 smpi/send-is-detached-thresh:1000000
run r256-base-again 32 "$out/platform-32"
run r1024-base 128 "$out/platform-128" -- perf record -q -F 100 -o "$out/perf-r1024.data"
perf report -i "$out/perf-r1024.data" --no-children --sort dso --stdio -g none 2>/dev/null | grep '%' |
  awk '{gsub("%", "", $1); if ($2 ~ /^bucket_sweep_/) own += $1; else if ($1 >= 0.1) printf "%6.2f %% %s\n", $1, $2}
       END {printf "%6.2f %% bucket_sweep (its %s per-rank copies summed)\n", own, "privatised"}' > "$out/perf-r1024-by-library.txt"
rm -f "$out/perf-r1024.data"
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
