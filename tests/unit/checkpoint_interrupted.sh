#!/usr/bin/env bash
# A trainer SIGKILLed while it writes a checkpoint over the previous one (--save-every 1 to the
# same path): the previous checkpoint is intact, loads, and resuming from it gives bit for bit
# the parameters of an uninterrupted run; the half-written <ckpt>.partial is refused.
#   checkpoint_interrupted.sh <trainer> [args...]
# The args pick a model whose checkpoint takes tens of ms to write (gpt-tiny: 39 MB), so the
# kill, sent as soon as <ckpt>.partial appears, lands inside the write.
set -u
# shellcheck source=../lib/expect_error.sh
source "$(dirname "$0")/../lib/expect_error.sh"
name=$(basename "$1")
ck=$tmp/ck.h5
pid=
trap '[ -n "$pid" ] && kill -KILL $pid 2>/dev/null; rm -rf "$tmp"' EXIT

# Start a long run checkpointing every step; kill it as soon as its next checkpoint write begins
# (a .partial appears, or, were the file written in place, the checkpoint changes). A kill that
# lands just after a rename leaves no .partial behind: try again.
interrupted=0
for attempt in 1 2 3 4 5; do
  rm -f "$ck" "$ck.partial"
  "$@" -s 100000 -q --save "$ck" --save-every 1 -o "$tmp/run.h5" >"$tmp/run.out" 2>&1 &
  pid=$!
  SECONDS=0
  until [ -e "$ck" ] || [ $SECONDS -gt 30 ]; do sleep 0.01; done        # the first one is complete
  sleep 0.01; touch "$tmp/ref"
  until [ -e "$ck.partial" ] || [ "$ck" -nt "$tmp/ref" ] || [ $SECONDS -gt 30 ]; do :; done
  in_place=0; [ -e "$ck.partial" ] || in_place=1
  kill -KILL $pid; wait $pid 2>/dev/null; pid=
  if [ ! -e "$ck" ] || [ $SECONDS -gt 30 ]; then
    echo "FAIL: $name did not write a checkpoint to $ck and begin the next one within 30 s:"
    sed 's/^/    /' "$tmp/run.out" | tail -n 5; failures=$((failures + 1)); finish checkpoint_interrupted; exit 1
  fi
  if [ $in_place = 1 ]; then
    echo "note: the checkpoint is rewritten in place (no $ck.partial)"; interrupted=1; break
  fi
  if [ -e "$ck.partial" ] && [ "$(stat -c %s "$ck.partial")" -lt "$(stat -c %s "$ck")" ]; then
    interrupted=1; break
  fi
done
checks=$((checks + 1))
if [ $interrupted = 0 ]; then
  echo "FAIL: 5 kills never landed inside a checkpoint write (no shorter $ck.partial left)"
  failures=$((failures + 1)); finish checkpoint_interrupted; exit 1
fi
if [ -e "$ck.partial" ]; then
  echo "killed inside a checkpoint write (attempt $attempt): $(stat -c %s "$ck.partial") of $(stat -c %s "$ck") bytes written"
  # The half-written file is refused with one line.
  expect_error "cannot load checkpoint '$ck.partial'" "$@" -s 100000 -q --resume "$ck.partial" -o "$tmp/bad.h5"
fi

# The previous checkpoint loads (its step, from the refusal of --steps 1), and resuming from it
# for two more steps ends with the parameters of an uninterrupted run of as many steps.
"$@" -s 1 -q --resume "$ck" -o "$tmp/probe.h5" >/dev/null 2>"$tmp/probe.err"
step=$(sed -n 's/.*the checkpoint is at step \([0-9]*\),.*/\1/p' "$tmp/probe.err")
checks=$((checks + 1))
if [ -z "$step" ]; then
  echo "FAIL: the previous checkpoint does not load:"; sed 's/^/    /' "$tmp/probe.err"; failures=$((failures + 1))
else
  hash_of() { sed -n 's/.*hash \([0-9a-f]*\).*/\1/p' "$1"; }
  "$@" -s $((step + 2)) -q --resume "$ck" -o "$tmp/resumed.h5" >"$tmp/resumed.out" 2>&1; rc=$?
  "$@" -s $((step + 2)) -q -o "$tmp/straight.h5" >"$tmp/straight.out" 2>&1
  checks=$((checks + 1))
  if [ $rc != 0 ] || [ -z "$(hash_of "$tmp/resumed.out")" ] || [ "$(hash_of "$tmp/resumed.out")" != "$(hash_of "$tmp/straight.out")" ]; then
    echo "FAIL: resuming from step $step (exit $rc) does not give the uninterrupted run's parameters:"
    grep -h "hash\|error" "$tmp/resumed.out" "$tmp/straight.out" | sed 's/^/    /'; failures=$((failures + 1))
  else
    echo "resumed from step $step to $((step + 2)): parameters hash $(hash_of "$tmp/resumed.out") as the uninterrupted run"
  fi
fi
finish checkpoint_interrupted
