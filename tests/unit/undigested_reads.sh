#!/usr/bin/env bash
# Files without the whole-file digest never reach libhdf5 in the reading process:
#  - the stored damaged regression inputs with their digest block stripped (schema-1/2-looking
#    files; libhdf5 crashes on some) give one line and exit 1 from trace_check, never a signal;
#  - a v3 trace with its user block stripped is refused (after the isolated read);
#  - stored undigested traces (schema 1 and 2) read through the isolated child give the same data as an
#    in-process read (h5_dump_probe), and trace_check passes them.
# Usage: undigested_reads.sh <trace_check> <h5_dump_probe> <source dir>
set -u
C=$1 P=$2 src=$3
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/expect_error.sh
source "$here/../lib/expect_error.sh"

stripped=0
while IFS= read -r f; do
  head -c 17 "$f" | grep -q scaleprobe-digest || continue  # the others are h5_builder programs
  stripped=$((stripped + 1))
  name=stripped-$(basename "$(dirname "$f")")-$(basename "$f" .h5).h5
  tail -c +513 "$f" >"$tmp/$name"
  expect_error "$name: " "$C" "$tmp/$name"
  rc=0; "$C" "$tmp/$name" >/dev/null 2>&1 || rc=$?
  if [ $rc -ne 1 ]; then echo "FAIL: trace_check $name exited $rc, wanted 1"; failures=$((failures + 1)); fi
done < <(find "$src"/tests/fuzz/regressions -type f | sort)
checks=$((checks + 1))
if [ $stripped -lt 3 ]; then echo "FAIL: only $stripped digested regression inputs found"; failures=$((failures + 1)); fi
# Under AddressSanitizer (the asan stage) a memory error or a failed allocation in the child may
# be ASan's report and exit status 1 rather than a signal or bad_alloc: any "unreadable" line then.
if ldd "$C" 2>/dev/null | grep -q libasan; then crashed="unreadable: " runaway="unreadable: "
else crashed="unreadable: the HDF5 library crashed on it (signal" runaway="unreadable: reading it needs more than 64 MiB of memory"
fi
# The one libhdf5 crashes on: the crash is named, in one line.
expect_error "$crashed" \
  "$C" "$tmp/stripped-fuzz_trace_reader-libhdf5-segv-dense-links-v18.h5"
# Two files, the first one crashing libhdf5: the second is still checked.
expect_ok() {
  checks=$((checks + 1))
  if ! grep -qF -- "$1" "$tmp/out"; then echo "FAIL: output lacks '$1':"; cat "$tmp/out"; failures=$((failures + 1)); fi
}
good=$src/results/2026-11-23-copy-probe-vm/probe_8M_p1.h5
"$C" "$tmp/stripped-fuzz_trace_reader-libhdf5-segv-dense-links-v18.h5" "$good" >"$tmp/out" 2>/dev/null
expect_ok "ok: $good "

# A v3 trace (digested) with its user block stripped: refused, one line.
v3=$src/results/2026-11-25-vm-f25m17-backends/allreduce_N1_t1_c1_p2_j6004.h5
tail -c +513 "$v3" >"$tmp/v3-stripped.h5"
expect_error "requires a whole-file digest and the file has none" "$C" "$tmp/v3-stripped.h5"

# Stored traces of the formats before the digest (the bytes after the block `scaleprobe-analyze upgrade`
# gave them: the original files): the isolated read returns what an in-process read does.
for rel in results/2026-11-23-vm-4x2-reliability/srun/allreduce_N4_t2_c1_j446031.h5 \
         results/2026-11-23-vm-cluster/gpt_train_N1_t1_c1_j127042.h5 \
         results/2026-11-23-vm-f6m167-peers-quick/raw/resnet_t1_p1.h5 \
         results/2026-11-23-vm-cluster/bucket_sweep_N1_t1_c1_j127030.h5 \
         results/2026-11-23-copy-probe-vm/probe_8M_p1.h5 \
         results/2026-11-24-vm-f25m17-isa-full/raw/isa_gpt_t2_p1_native.h5; do
  f=$tmp/undigested-$(basename "$rel")
  if head -c 17 "$src/$rel" | grep -q scaleprobe-digest; then tail -c +513 "$src/$rel" >"$f"; else cp "$src/$rel" "$f"; fi
  checks=$((checks + 1))
  "$P" "$f" >"$tmp/isolated" 2>"$tmp/err" && "$P" --in-process "$f" >"$tmp/direct" 2>>"$tmp/err"
  if [ "$(head -1 "$tmp/isolated")" != "# no digest: read in isolation" ] || ! diff -q <(tail -n +2 "$tmp/isolated") "$tmp/direct" >/dev/null ||
     [ "$(wc -l <"$tmp/direct")" -lt 10 ]; then
    echo "FAIL: $f read in isolation differs from the in-process read:"; cat "$tmp/err"; diff <(tail -n +2 "$tmp/isolated") "$tmp/direct" | head -5
    failures=$((failures + 1))
  fi
  checks=$((checks + 1))
  if ! "$C" "$f" 2>&1 | grep -q " no digest (older format)"; then echo "FAIL: trace_check $f"; failures=$((failures + 1)); fi
done
# A read that hangs or allocates without bound in the child is one line (the limits work).
expect_error "unreadable: the HDF5 library did not finish reading it in 1 s" "$P" --hang "$f"
expect_error "$runaway" "$P" --runaway "$f"

# Inside an MPI program (2 ranks, the child forked after MPI_Init): the same data, a clean exit.
checks=$((checks + 1))
if [ -n "${SP_MPIEXEC:-}" ]; then
  if ! "$SP_MPIEXEC" -n 2 "$P" --mpi "$f" >"$tmp/mpi" 2>"$tmp/err" || ! diff -q "$tmp/mpi" "$tmp/isolated" >/dev/null; then
    echo "FAIL: the isolated read under mpiexec -n 2:"; cat "$tmp/err"; failures=$((failures + 1))
  fi
else
  echo "FAIL: SP_MPIEXEC is not set (run through ctest)"; failures=$((failures + 1))
fi
finish undigested_reads
