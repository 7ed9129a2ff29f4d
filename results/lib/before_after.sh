# Sourced by the measure.sh of 2026-12-02-vm-f6m207-shm-seg-write-all: two builds (or one with and
# without a flag) timed in interleaved passes, the side that runs first alternating from pass to
# pass; the machine written to machine.txt in the current folder first.
# shellcheck shell=bash

# before_after PASSES RUN BEFORE AFTER: per pass p, `RUN SIDE_BINARY NAME` for each side in turn
# (NAME = before-pP or after-pP; RUN writes NAME's files); a failed run is named. After each pass
# its time and the load.
before_after() {
  local passes=$1 run=$2 before=$3 after=$4 p side sides
  { lscpu; grep -m1 '^flags' /proc/cpuinfo; mpirun --version | head -1; } > machine.txt
  echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
  for p in $(seq 1 "$passes"); do
    sides="before after"; [ $((p % 2)) -eq 0 ] && sides="after before"
    for side in $sides; do
      if [ "$side" = before ]; then "$run" "$before" "$side-p$p"; else "$run" "$after" "$side-p$p"; fi ||
        echo "FAILED $side-p$p"
    done
    echo "pass $p done $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
  done
}
