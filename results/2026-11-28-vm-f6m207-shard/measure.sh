#!/bin/bash
# --shard optimizer and --shard gradients against unsharded DDP (same run of this script,
# interleaved, the order rotated each pass): gpt-tiny (8 rows per rank) and ResNet-20 (32 images per rank), 2 ranks bound one per
# core, one thread each, weak scaling, ring buckets at the default 25 MiB cap, progress overlap.
#   bash measure.sh BUILD_DIR PASSES   (raw/, machine.txt and measure.log here)
set -u
# rotated_passes, as ../2026-11-28-vm-f6m207-shard-gather runs its variants
# shellcheck source=../lib/rotated_runs.sh
. "$(dirname "$0")/../lib/rotated_runs.sh"
build=$1 passes=${2:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
mkdir -p raw
{ lscpu; grep -m1 '^flags' /proc/cpuinfo; } > machine.txt
gpt=("$build/trainers/gpt/gpt_train" -m gpt-tiny -B 8 -s 14 --val-batches 0)
resnet=("$build/trainers/resnet/resnet_train" --depth 20 -B 32 -s 14 --val-images 0 --synthetic-images 2048)
declare -A how=([none]="--shard none" [optimizer]="--shard optimizer" [gradients]="--shard gradients")
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) $(grep -m1 'model name' /proc/cpuinfo)"
rotated_passes "$passes" gpt:none gpt:optimizer gpt:gradients resnet:none resnet:optimizer resnet:gradients
# Peak RSS without the first step's verification (it holds three double copies of the gradients,
# which set the peak above): gpt-tiny once each way with --verify-steps 0.
for shard in none optimizer gradients; do
  mpirun -np 2 --bind-to core "${gpt[@]}" --verify-steps 0 --shard "$shard" -o "raw/noverify-gpt-$shard.h5" \
    > "raw/noverify-gpt-$shard.txt" 2>&1 || echo "FAILED noverify $shard"
done
echo "end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
