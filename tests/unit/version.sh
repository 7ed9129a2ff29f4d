#!/usr/bin/env bash
# --version on every program: each in <build>/bin (so a program added with scaleprobe_program()
# is covered without editing this test) and scaleprobe-analyze prints one line
# "<name> (scaleprobe <project version>) ..." and exits 0; the C++ programs also name the git
# revision and the baseline ISA.
#   version.sh BUILD_DIR PROJECT_VERSION
set -u
B=$1 V=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib/expect_error.sh
source "$ROOT/tests/lib/expect_error.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
n=0
for p in "$B"/bin/* "$ROOT/analysis/scaleprobe-analyze"; do
  name=$(basename "$p") n=$((n + 1)) checks=$((checks + 1))
  out=$("$p" --version 2>&1); rc=$?
  if [ $rc != 0 ] || [ "$(grep -c . <<<"$out")" != 1 ] || [[ $out != "$name (scaleprobe $V)"* ]]; then
    echo "FAIL: $name --version (exit $rc): $out"; failures=$((failures + 1))
  elif [ "$name" != scaleprobe-analyze ] && [[ $out != *" git "*"baseline ISA"* ]]; then
    echo "FAIL: $name --version lacks the revision or the ISA: $out"; failures=$((failures + 1))
  fi
done
[ $n -ge 6 ] || { echo "FAIL: only $n programs in $B/bin"; failures=$((failures + 1)); }
finish version
