#!/usr/bin/env bash
# .ci/run refuses, before installing or building anything, every switch that would leave a stage
# out or widen the skips: one line on stderr naming the variable, exit non-zero. It runs a copy of
# .ci/run and tests/optional-parts.txt beside a stub scripts/test.sh that only records that it
# started (so a broken guard can never start a real CI run from a test).
#   ci_run.sh <source dir>
set -uo pipefail
src=$1
. "$src/tests/lib/expect_error.sh"
mkdir -p "$tmp/tree/.ci" "$tmp/tree/scripts" "$tmp/tree/tests"
cp "$src/.ci/run" "$tmp/tree/.ci/run"
cp "$src/tests/optional-parts.txt" "$tmp/tree/tests/optional-parts.txt"
printf '#!/usr/bin/env bash\necho "started CI=$SCALEPROBE_CI ASAN=$SCALEPROBE_ASAN args=$*" > "%s/started"\n' "$tmp" \
  > "$tmp/tree/scripts/test.sh"
chmod +x "$tmp/tree/.ci/run" "$tmp/tree/scripts/test.sh"
# ci VAR=value...: .ci/run in a clean environment plus these variables
ci() { env -i PATH="$PATH" HOME="${HOME:-/}" "$@" "$tmp/tree/.ci/run"; }

# refused VAR=value: one line naming VAR=value, non-zero exit, and the stub never started
refused() {
  rm -f "$tmp/started"
  expect_error "$1" ci "$1"
  checks=$((checks + 1))
  if [ -e "$tmp/started" ]; then echo "FAIL: .ci/run with $1 started scripts/test.sh"; failures=$((failures + 1)); fi
}

for stage in ASAN FUZZ INSTALLED MPICH SMPI; do refused "SCALEPROBE_$stage=0"; done
refused SCALEPROBE_FUZZ=no
# the skip-widening switches the issue names, and every condition in the list (a part added later)
for v in SCALEPROBE_NO_TORCH=1 SCALEPROBE_NO_ROOT=1 SCALEPROBE_GLOO=OFF \
         $(awk '!/^#/ && $2 ~ /=/ { print $2 }' "$src/tests/optional-parts.txt"); do
  refused "$v"
done
refused SCALEPROBE_OPTIONAL_PARTS=/tmp/all-parts-always.txt
expect_error "takes no arguments" "$tmp/tree/.ci/run" -L unit

# Harmless values pass through to scripts/test.sh, which .ci/run runs strictly.
for ok in "" SCALEPROBE_FUZZ=1 SCALEPROBE_GLOO=ON SCALEPROBE_NO_TORCH=0; do
  checks=$((checks + 1)); rm -f "$tmp/started"
  if ! ci $ok >"$tmp/out" 2>&1 || [ "$(cat "$tmp/started" 2>/dev/null)" != "started CI=1 ASAN=1 args=" ]; then
    echo "FAIL: .ci/run with '${ok:-nothing}' did not start scripts/test.sh strictly:"; cat "$tmp/out" "$tmp/started" 2>&1
    failures=$((failures + 1))
  fi
done
finish ci_run
