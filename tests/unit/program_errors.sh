#!/usr/bin/env bash
# Every exception a program body throws becomes one line "<program>: error: <message>" and the
# project's exit code (1 failed run, 2 usage), never an abort with a C++ runtime message; a failure
# on one rank of several still aborts the job (no rank left waiting) after its one line.
# Usage: program_errors.sh <program_error_probe> [mpiexec flags...]
set -u
P=$1; shift
# shellcheck source=../lib/expect_error.sh
source "$(dirname "$0")/../lib/expect_error.sh"
expect_rc() {  # <exit code> <text the one line must contain> <command...>
  local want=$1 pattern=$2; shift 2
  checks=$((checks + 1))
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  if [ $rc -ne "$want" ] || [ "$(grep -c . "$tmp/err")" -ne 1 ] || ! grep -qF -- "program_error_probe: error: $pattern" "$tmp/err"; then
    echo "FAIL: '$*' rc=$rc (want $want), wanted one line with '$pattern':"; sed 's/^/    /' "$tmp/err"; failures=$((failures + 1))
  fi
}
expect_rc 1 "out of memory (std::bad_alloc)" "$P" bad_alloc
expect_rc 1 "unexpected data type ("         "$P" variant
expect_rc 1 "size too large"                 "$P" length
expect_rc 1 "value out of range: "           "$P" range
expect_rc 1 "filesystem error: cannot rename" "$P" filesystem
expect_rc 1 "first line second line"         "$P" multiline
expect_rc 1 "unexpected exception of unknown type" "$P" int
expect_rc 2 "--flag out of range"            "$P" usage
checks=$((checks + 1))
"$P" none >/dev/null 2>&1 || { echo "FAIL: a body that returns 0 did not exit 0"; failures=$((failures + 1)); }
# Rank 1 of 3 runs out of memory while the others wait in a barrier: its one line names the rank
# and the problem, and the job ends (aborted) instead of hanging.
checks=$((checks + 1))
start=$(date +%s)
timeout 60 "${SP_MPIEXEC:-mpirun}" "$@" -np 3 "$P" bad_alloc 1 >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ $rc -eq 0 ] || [ $rc -eq 124 ] || ! grep -qx "program_error_probe: error: rank 1: out of memory (std::bad_alloc)" "$tmp/err"; then
  echo "FAIL: 3 ranks, rank 1 out of memory: rc=$rc after $(( $(date +%s) - start )) s:"; sed 's/^/    /' "$tmp/err"
  failures=$((failures + 1))
fi
finish program_errors
