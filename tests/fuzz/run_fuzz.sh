#!/usr/bin/env bash
# The fuzz CTests (tests/fuzz/CMakeLists.txt):
#   run_fuzz.sh replay FUZZER NAME SRC_DIR
#       runs every file of SRC_DIR/corpus/NAME and SRC_DIR/regressions/NAME once; inputs listed
#       in SRC_DIR/known-open.txt ("NAME FILE reason") do not count: each is run alone and printed
#       as "still crashes" or "NOW PASSES" (then its line can go and the replay guards the fix).
#   run_fuzz.sh run FUZZER NAME SRC_DIR WORK_DIR SECONDS RSS_MB
#       fuzzes for SECONDS from the seeds (new inputs go to WORK_DIR/corpus, crashes to
#       WORK_DIR/crash-*), then prints "NAME: N inputs in S s, K crashing"; fails if K > 0.
set -u
mode=$1 fuzzer=$2 name=$3 src=$4
corpus=$src/corpus/$name regressions=$src/regressions/$name known=$src/known-open.txt
# The targets write each input to a file here (fuzz_util.hpp); a crashing process cannot remove
# its own, so the whole directory goes at the end.
SCALEPROBE_FUZZ_TMPDIR=$(mktemp -d /dev/shm/scaleprobe-fuzz.XXXXXX 2> /dev/null || mktemp -d)
export SCALEPROBE_FUZZ_TMPDIR
trap 'rm -rf "$SCALEPROBE_FUZZ_TMPDIR"' EXIT

case $mode in
replay)
  # A directory in regressions/NAME is a sequence: a crash that needs the library state the
  # inputs before it left (e.g. libhdf5's), replayed in file-name order in one process.
  run_unit() { if [[ -d $1 ]]; then "$fuzzer" -runs=1 "$1"/*; else "$fuzzer" -runs=1 "$1"; fi; }
  inputs=() sequences=() skipped=0
  for f in "$corpus"/* "$regressions"/*; do
    [[ -e $f ]] || continue
    rel=${f#"$src"/}
    if [[ -f $known ]] && reason=$(awk -v n="$name" -v f="$rel" '$1 == n && $2 == f { $1 = $2 = ""; print; found = 1 } END { exit !found }' "$known"); then
      # Still run it, to tell the integrator when a fix has landed (the result does not count).
      if run_unit "$f" > /dev/null 2>&1; then state="NOW PASSES: delete its line from known-open.txt"
      else state="still crashes"; fi
      echo "SKIPPED (known open, $state):$reason -- $rel"
      skipped=$((skipped + 1))
    elif [[ -d $f ]]; then sequences+=("$f")
    else inputs+=("$f")
    fi
  done
  if ((${#inputs[@]} == 0)); then echo "$name: no inputs in $corpus" >&2; exit 1; fi
  log=${TMPDIR:-/tmp}/replay-$name-$$.log rc=0
  "$fuzzer" -runs=1 "${inputs[@]}" > "$log" 2>&1 || { rc=$?; tail -n 60 "$log"; }
  for seq in "${sequences[@]}"; do
    run_unit "$seq" > "$log" 2>&1 || { rc=$?; tail -n 60 "$log"; }
  done
  rm -f "$log"
  echo "$name: replayed ${#inputs[@]} inputs and ${#sequences[@]} sequences, skipped $skipped known-open, exit $rc"
  exit $rc
  ;;
run)
  # Fork mode with crashes ignored: the run lasts SECONDS whatever it finds (a known-open crash
  # does not end it early), so the input count is comparable from run to run; any crash fails it.
  work=$5 seconds=$6 rss=$7
  mkdir -p "$work/corpus"
  rm -f "$work"/crash-* "$work"/oom-* "$work"/timeout-* "$work"/leak-*
  start=$(date +%s)
  "$fuzzer" -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 -max_total_time="$seconds" \
    -rss_limit_mb="$rss" -timeout=10 -artifact_prefix="$work/" "$work/corpus" "$corpus" > "$work/log" 2>&1
  rc=$?
  runs=$(sed -n 's/^#\([0-9]*\): cov.*/\1/p' "$work/log" | tail -n 1)
  found=$(ls "$work"/crash-* "$work"/oom-* "$work"/timeout-* "$work"/leak-* 2> /dev/null)
  if [[ -n $found ]]; then
    n=$(echo "$found" | wc -l)
    echo "$name: $n crashing inputs (replay one with: $fuzzer FILE), e.g.:"
    echo "$found" | head -n 5 | sed 's/^/  /'
    echo "  a new one goes to tests/fuzz/regressions/$name/ (README.md); known-open.txt lists the open ones"
    rc=1
  fi
  echo "$name: ${runs:-?} inputs in $(( $(date +%s) - start )) s, $(echo -n "$found" | grep -c .) crashing, exit $rc"
  exit $rc
  ;;
*) echo "usage: run_fuzz.sh replay|run ..." >&2; exit 2 ;;
esac
