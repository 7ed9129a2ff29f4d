#!/bin/bash
# Issue 25 "done when" at 2 ranks x 1 core: gpt-tiny and ResNet-20, caps 1, 5 and 25 MiB cycled
# step by step, each model run in four ways per pass — no communication (--no-comm, the
# same-load baseline), --overlap progress (the default here: one core per rank), --overlap none,
# and on Gloo (--overlap thread: its waits sleep) — the order rotating by one every pass.
#   bash measure.sh BUILD_DIR OUT_DIR PASSES
set -u
# The arguments, the environment (OpenBLAS's own core: the VM's OPENBLAS_CORETYPE unset), the two
# models' command lines and run_2ranks.
# shellcheck source=../lib/vm_2ranks.sh
. "$(dirname "$0")/../lib/vm_2ranks.sh"
common="-s 21 -q --bucket-cap-mb 1,5,25 -a ring"
modes=(nocomm progress none gloo)
declare -A flags=([nocomm]="--no-comm" [progress]="--overlap progress" [none]="--overlap none"
                  [gloo]="--backend gloo --overlap thread")
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in $(seq 1 "$passes"); do
  for m in gpt resnet; do
    for i in 0 1 2 3; do
      mode=${modes[$(( (i + p - 1) % 4 ))]}
      name="$m-$mode-p$p"
      run_2ranks "$name" ${model[$m]} $common ${flags[$mode]}
    done
  done
  echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
