#!/bin/bash
# --shard optimizer with the parameters' all-gather overlapped with the next forward (next-forward)
# against the same all-gather completed right after the update (after-update), unsharded DDP beside
# them; same run of this script, the order rotated each pass. gpt-tiny (8 rows per rank, 1 MiB
# buckets: 13) and ResNet-20 (32 images per rank, 0.25 MiB buckets), 2 ranks bound one per core,
# one thread each, weak scaling, ring, progress overlap.
#   bash measure.sh BUILD_DIR PASSES   (raw/, machine.txt and measure.log here)
set -u
# rotated_passes, shared with ../2026-11-28-vm-f6m207-shard
# shellcheck source=../lib/rotated_runs.sh
. "$(dirname "$0")/../lib/rotated_runs.sh"
build=$1 passes=${2:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
unset OPENBLAS_CORETYPE
mkdir -p raw
{ lscpu; grep -m1 '^flags' /proc/cpuinfo; } > machine.txt
gpt=("$build/trainers/gpt/gpt_train" -m gpt-tiny -B 8 -s 14 --val-batches 0 --bucket-cap-mb 1)
resnet=("$build/trainers/resnet/resnet_train" --depth 20 -B 32 -s 14 --val-images 0 --synthetic-images 2048 --bucket-cap-mb 0.25)
declare -A how=([none]="--shard none" [after]="--shard optimizer --shard-gather after-update"
                [next]="--shard optimizer --shard-gather next-forward")
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) $(grep -m1 'model name' /proc/cpuinfo)"
rotated_passes "$passes" gpt:none gpt:after gpt:next resnet:none resnet:after resnet:next
echo "end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
