#!/usr/bin/env bash
# Memory per rank is bounded by design: the peak resident memory of every rank of a small-message
# allreduce_perf run (copy probe included) and of a bucket_sweep stays under BOUND_MIB at 1 and 4
# ranks on this node, also when the last-level cache is reported as 64 GiB. It is measured from
# outside (/usr/bin/time, the kernel's maxrss), and the measurement is checked to see a large
# buffer (--membw-bytes 256M must show up), so the test can fail.
#   tests/mpi/peak_memory.sh <collectives bin dir> [mpiexec flags...]
set -u
bin=$1; shift
BOUND_MIB=${BOUND_MIB:-300}
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
layout=$(dirname "$0")/../slurm/tiny.layout
checks=0 failures=0
# peak NP LABEL CMD...: every rank's maxrss in KiB, one per line, in $W/rss
peak() {
  local np=$1 label=$2; shift 2
  rm -f "$W/rss"
  if ! "${SP_MPIEXEC:-mpirun}" -np "$np" "$@" >"$W/out" 2>&1; then
    echo "FAIL: $label: the run failed:"; tail -n 20 "$W/out"; failures=$((failures + 1)); checks=$((checks + 1)); return 1
  fi
  [ "$(grep -c . "$W/rss" 2>/dev/null)" = "$np" ] || { echo "FAIL: $label: expected $np maxrss lines:"; cat "$W/out" "$W/rss"; failures=$((failures + 1)); return 1; }
}
# below NP LABEL CMD...: every rank under the bound
below() {
  local np=$1 label=$2
  peak "$@" || return
  checks=$((checks + 1))
  local max; max=$(sort -n "$W/rss" | tail -1)
  if [ "$max" -ge $((BOUND_MIB * 1024)) ]; then
    echo "FAIL: $label: a rank peaked at $((max / 1024)) MiB (bound $BOUND_MIB MiB)"; failures=$((failures + 1))
  else
    echo "ok   $label: peak $((max / 1024)) MiB per rank (ranks: $(tr '\n' ' ' <"$W/rss")KiB)"
  fi
}
T=(/usr/bin/time -f %M -a -o "$W/rss")   # one line per rank, appended
AR=("$bin/allreduce_perf" --sizes 8 -n 5 -q -o "$W/ar.h5")
for np in 1 4; do
  below "$np" "allreduce_perf --sizes 8 -n 5, $np rank(s)" "$@" "${T[@]}" "${AR[@]}"
  below "$np" "the same with a 64 GiB last-level cache reported" "$@" env SCALEPROBE_LLC_BYTES=64G "${T[@]}" "${AR[@]}"
  below "$np" "allreduce_perf --off-cache, 8 B and 1 MiB" "$@" "${T[@]}" "$bin/allreduce_perf" --sizes 8,1M -n 5 --off-cache -q -o "$W/ar.h5"
  below "$np" "bucket_sweep --off-cache, tiny layout" "$@" "${T[@]}" "$bin/bucket_sweep" --layout "$layout" -n 2 --off-cache -q -o "$W/bs.h5"
done
# The measurement sees buffers: two 256 MiB arrays must show.
if peak 1 "--membw-bytes 256M" "$@" "${T[@]}" "${AR[@]}" --membw-bytes 256M; then
  checks=$((checks + 1))
  got=$(head -1 "$W/rss")
  if [ "$got" -lt $((512 * 1024)) ]; then echo "FAIL: --membw-bytes 256M peaked at only $((got / 1024)) MiB"; failures=$((failures + 1))
  else echo "ok   --membw-bytes 256M is seen: $((got / 1024)) MiB"; fi
fi
echo "peak_memory: $((checks - failures)) passed, $failures failed"
[ "$failures" = 0 ]
