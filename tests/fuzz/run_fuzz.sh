#!/usr/bin/env bash
# The fuzz CTests (tests/fuzz/CMakeLists.txt):
#   run_fuzz.sh replay FUZZER NAME SRC_DIR
#       runs every file of SRC_DIR/corpus/NAME and SRC_DIR/regressions/NAME once; inputs listed
#       in SRC_DIR/known-open.txt ("NAME FILE reason") do not count: each is run alone and printed
#       as "still crashes" or "NOW PASSES" (then its line can go and the replay guards the fix).
#   run_fuzz.sh run FUZZER NAME SRC_DIR WORK_DIR SECONDS RSS_MB
#       fuzzes for SECONDS from the seeds (new inputs go to WORK_DIR/corpus, a crash to
#       WORK_DIR/crash-*), then prints "NAME: N inputs in S s".
set -u
mode=$1 fuzzer=$2 name=$3 src=$4
corpus=$src/corpus/$name regressions=$src/regressions/$name known=$src/known-open.txt

case $mode in
replay)
  inputs=() skipped=0
  for f in "$corpus"/* "$regressions"/*; do
    [[ -f $f ]] || continue
    rel=${f#"$src"/}
    if [[ -f $known ]] && reason=$(awk -v n="$name" -v f="$rel" '$1 == n && $2 == f { $1 = $2 = ""; print; found = 1 } END { exit !found }' "$known"); then
      # Still run it, to tell the integrator when a fix has landed (the result does not count).
      if "$fuzzer" -runs=1 "$f" > /dev/null 2>&1; then state="NOW PASSES: delete its line from known-open.txt"
      else state="still crashes"; fi
      echo "SKIPPED (known open, $state):$reason -- $rel"
      skipped=$((skipped + 1))
      continue
    fi
    inputs+=("$f")
  done
  if ((${#inputs[@]} == 0)); then echo "$name: no inputs in $corpus" >&2; exit 1; fi
  "$fuzzer" -runs=1 "${inputs[@]}" > "${TMPDIR:-/tmp}/replay-$name-$$.log" 2>&1
  rc=$?
  if ((rc != 0)); then tail -n 60 "${TMPDIR:-/tmp}/replay-$name-$$.log"; fi
  rm -f "${TMPDIR:-/tmp}/replay-$name-$$.log"
  echo "$name: replayed ${#inputs[@]} inputs, skipped $skipped known-open, exit $rc"
  exit $rc
  ;;
run)
  work=$5 seconds=$6 rss=$7
  mkdir -p "$work/corpus"
  start=$(date +%s)
  "$fuzzer" -max_total_time="$seconds" -rss_limit_mb="$rss" -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$work/" "$work/corpus" "$corpus" > "$work/log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
  if ((rc != 0)); then
    tail -n 80 "$work/log"
    echo "$name: FAILED after ${runs:-?} inputs; the input is $(ls -t "$work"/crash-* "$work"/oom-* "$work"/timeout-* "$work"/leak-* 2>/dev/null | head -n 1)"
    echo "  keep it in tests/fuzz/regressions/$name/ (README.md)"
  fi
  echo "$name: ${runs:-?} inputs in $(( $(date +%s) - start )) s, exit $rc"
  exit $rc
  ;;
*) echo "usage: run_fuzz.sh replay|run ..." >&2; exit 2 ;;
esac
