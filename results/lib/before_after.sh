# Sourced by the measure.sh of 2026-12-02-vm-f6m207-shm-seg-write-all and
# 2026-12-02-vm-f6m207-shm-stream: two builds (or one with and without a flag) timed in interleaved
# passes, the side that runs first alternating from pass to pass; the machine written to
# machine.txt in the current folder first.
# shellcheck shell=bash

# before_after_main RUN BEFORE AFTER [PASSES [RAW]]: a measure.sh's arguments (the two binaries,
# the passes, 5 unless given, and the folder RUN writes into, raw unless given: $raw, made),
# resolved before moving to the campaign's folder; MPI as root and one thread per rank; then
# before_after.
before_after_main() {
  local run=$1 before after passes
  before=$(realpath "$2") && after=$(realpath "$3") && passes=${4:-5} && raw=$(realpath -m "${5:-raw}") || exit 1
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
  mkdir -p "$raw" && cd "$(dirname "$0")" || exit 1
  before_after "$passes" "$run" "$before" "$after"
}

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
