#!/usr/bin/env bash
# A run killed mid-way never leaves a trace under its final name: only <name>.h5.partial, which
# trace_check refuses. Usage: killed_run.sh <collectives bin dir> <core bin dir>
set -u
coll=$1 core=$2
tmp=$(mktemp -d); trap 'kill -KILL $pid 2>/dev/null; rm -rf "$tmp"' EXIT
"$coll/allreduce_perf" -b 8 -e 64M -n 100000 --no-membw -q -o "$tmp/run.h5" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 200); do [ -e "$tmp/run.h5.partial" ] && break; sleep 0.1; done
[ -e "$tmp/run.h5.partial" ] || { echo "FAIL: no .partial file appeared within 20 s"; exit 1; }
sleep 0.5
kill -KILL $pid; wait $pid 2>/dev/null
fail=0
[ -e "$tmp/run.h5" ] && { echo "FAIL: a killed run left $tmp/run.h5"; fail=1; }
if "$core/trace_check" "$tmp/run.h5.partial" >/dev/null 2>"$tmp/err"; then
  echo "FAIL: trace_check accepted the partial file"; fail=1
elif ! grep -q "incomplete trace" "$tmp/err"; then
  echo "FAIL: unexpected message: $(cat "$tmp/err")"; fail=1
fi
if "$core/trace_check" "$tmp/run.h5" >/dev/null 2>"$tmp/err" || ! grep -q "not found" "$tmp/err"; then
  echo "FAIL: missing final trace not reported as not found"; fail=1
fi
[ $fail = 0 ] && echo "killed_run: 1 passed, 0 failed" || echo "killed_run: 0 passed, 1 failed"
exit $fail
