#!/usr/bin/env bash
# Timing-only cases of the simulated build (collectives/transports/timing_only.hpp): with the private limit
# set low (SCALEPROBE_SIM_PRIVATE_BYTES), the large cases of allreduce_perf and bucket_sweep run on
# SMPI shared buffers, unverified (wrong = -1, counted in the trace's timing_only_cases), the small
# ones still verified (wrong = 0); and every timing-only case takes the simulated time the same
# case takes with private, verified buffers (local work takes no simulated time), to 0.1 %.
#   bash timing_only.sh BUILD_DIR
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh" "$@"

# 8 ranks; (3 x message + workspace) x 8 ranks: 64 KiB cases take at most 2 MiB, 256 KiB ones 8 MiB.
allreduce() {
  sim --nodes 4 --ranks-per-node 2 allreduce_perf -b 64K -e 256K -f 4 --placement both -n 3 -w 1 -q -o "$work/$1.h5" \
    > "$work/$1.txt" 2>&1 || { cat "$work/$1.txt"; fail "allreduce_perf ($1)"; }
}
SCALEPROBE_SIM_PRIVATE_BYTES=4M allreduce shared
allreduce private
grep -q '^# timing only: .* pass 4M ' "$work/shared.txt" || fail "no timing-only line: $(grep '^#' "$work/shared.txt")"
# Rows: size count dtype op placement algorithm iters t_min t_mean ...; #wrong last.
awk '!/^#/ { want = ($1 == "64K") ? 0 : -1; if ($NF != want) { print; bad = 1 } } END { exit bad }' "$work/shared.txt" ||
  fail "64K verified (0), 256K timing only (-1) expected"
awk '!/^#/ && $NF != 0 { bad = 1 } END { exit bad }' "$work/private.txt" || fail "a private case not verified"
[ "$(h5dump -a timing_only_cases "$work/shared.h5" | grep -c '(0): 12$')" = 1 ] ||
  fail "timing_only_cases is not 12 (6 algorithms x 2 placements at 256K)"
same_times() {  # t_min and t_mean (columns 8, 9) of every row, within 0.1 %
  paste <(grep -v '^#' "$work/$1.txt") <(grep -v '^#' "$work/$2.txt") |
    awk -v n="$3" '{ for (c = 8; c <= 9; ++c) { a = $c; b = $(c + n); if (a - b > 1e-3 * b || b - a > 1e-3 * b) { print; bad = 1 } } }
                   END { exit bad }' || fail "$1 and $2: simulated times differ"
}
same_times shared private "$(head -1 <(grep -v '^#' "$work/private.txt") | awk '{ print NF }')"

bucket() {
  sim --nodes 3 --ranks-per-node 2 bucket_sweep --layout resnet50 -c 5,25 -a ring,mpi -n 1 -q -o "$work/$1.h5" \
    > "$work/$1.txt" 2>&1 || { cat "$work/$1.txt"; fail "bucket_sweep ($1)"; }
}
SCALEPROBE_SIM_PRIVATE_BYTES=64M bucket bshared
bucket bprivate
awk '!/^#/ && $NF != -1 { bad = 1 } END { exit bad }' "$work/bshared.txt" || fail "bucket_sweep: a case not timing only"
awk '!/^#/ && $NF != 0 { bad = 1 } END { exit bad }' "$work/bprivate.txt" || fail "bucket_sweep: a private case not verified"
# Rows: algorithm cap buckets t_min t_mean ...: columns 4 and 5.
paste <(grep -v '^#' "$work/bshared.txt") <(grep -v '^#' "$work/bprivate.txt") |
  awk '{ n = NF / 2; for (c = 4; c <= 5; ++c) { a = $c; b = $(c + n); if (a - b > 1e-3 * b || b - a > 1e-3 * b) { print; bad = 1 } } }
       END { exit bad }' || fail "bucket_sweep: timing-only and private times differ"
echo "timing-only cases: unverified, counted, and timed as the private ones"
