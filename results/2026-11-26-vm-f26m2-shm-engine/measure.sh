#!/bin/bash
# Issue 27's engine target at 2 ranks x 1 core: gpt-tiny (8 rows per rank) and ResNet-20 with the
# gradient buckets allreduced by ring and by shm, cycled step by step in one run (the same load,
# interleaved), caps 1 and 25 MiB, the engine's default overlap mode (progress here), every pass kept.
#   bash measure.sh BUILD_DIR OUT_DIR PASSES
set -u
# The arguments, the environment (OpenBLAS's own core, as the overlap campaign), the two models'
# command lines and run_2ranks.
# shellcheck source=../lib/vm_2ranks.sh
. "$(dirname "$0")/../lib/vm_2ranks.sh"
common="-s 25 -q --bucket-cap-mb 1,25 -a ring,shm"
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $(seq 1 "$passes"); do
  for m in gpt resnet; do
    name="$m-p$p"
    run_2ranks "$name" ${model[$m]} $common
  done
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
