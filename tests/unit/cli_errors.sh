#!/usr/bin/env bash
# Bad command-line input must give a non-zero exit and exactly one line on stderr naming the
# problem. Usage: cli_errors.sh <collectives bin dir> <core bin dir>
set -u
coll=$1 core=$2
# shellcheck source=../lib/expect_error.sh
source "$(dirname "$0")/../lib/expect_error.sh"
A=$coll/allreduce_perf B=$coll/bucket_sweep P=$coll/p2p_perf C=$coll/collective_perf
expect_error "malformed size 'x'"        $A --sizes 8,x
expect_error "empty item"                $A --sizes 8,,16
expect_error "unknown suffix"            $A -e 64Q
expect_error "larger than maximum"       $A -b 1M -e 1K
expect_error "factor must be greater"    $A -f 1
expect_error "--iters"                   $A -n -3
expect_error "--iters"                   $A -n 1000001   # each iteration is a trace row held per rank
expect_error "--warmup"                  $A -w -5
expect_error "--sync"                    $A --sync sometimes
expect_error "unknown algorithm 'foo'"   $A -a ring,foo
expect_error "unknown dtype 'f16'"       $A -d f16
expect_error "--op"                      $A --op prod
expect_error "--chunk must be"           $A --chunk 0
expect_error "not expected"              $A --bogus
expect_error "cannot create trace"       $A --sizes 8 -n 1 -o /proc/forbidden/x.h5 --no-membw
expect_error "cannot write trace '$tmp': it is a directory" $A --sizes 8 -n 1 -o "$tmp" --no-membw
expect_error "--scaling"                 $A --scaling medium
expect_error "--membw-bytes 1K: at least 4K" $A --membw-bytes 1K
expect_error "--membw-bytes: malformed size" $A --membw-bytes lots
expect_error "exceed this machine's"     $A --membw-bytes 900G
# collective_perf: the collective, its root and placement, its own algorithms (one rank).
expect_error "-c: unknown collective 'gather'" $C -c gather
expect_error "--root 1: not one of the 1 ranks (0 to 0)" $C -c broadcast --root 1
expect_error "--placement in: all_gather runs out of place only" $C -c all_gather --placement in
expect_error "unknown reduce_scatter algorithm 'binomial'" $C -c reduce_scatter -a binomial
expect_error "--imbalance 0.5: only all_to_allv moves blocks of unequal sizes" $C -c all_to_all --imbalance 0.5
expect_error "--imbalance 1: from 0 (balanced) to below 1" $C -c all_to_allv --imbalance 1
# p2p_perf: its own refusals, the options before the rank count (these run as one rank).
expect_error "message size 6 bytes: point-to-point messages are whole 4-byte elements" $P --sizes 4,6
expect_error "unknown point-to-point test 'osu'" $P -t bw,osu
expect_error "--window"                  $P --window 0
expect_error "--scaling weak: a message between two ranks" $P --scaling weak
expect_error "p2p_perf measures between rank pairs: it needs 2 or more ranks, got 1" $P -n 1
expect_error "p2p_perf measures between rank pairs: it needs 2 or more ranks, got 1" $P -n 1 --pairs each
expect_error "--pairs"                   $P --pairs some
# Sizes: refused before anything is allocated (issue 14: --sizes 3 ran with count 0 and said
# nothing, 99999999999999999 ended in std::bad_alloc, a parser through double rounded it).
expect_error "message size 3 bytes is smaller than one f32 element (4 bytes)" $A --sizes 8,3
expect_error "smaller than one f64 element"   $A --sizes 8,4 -d f32,f64
expect_error "smaller than one bf16 element"  $A -b 1 -e 64 -d bf16
expect_error "message size 2 bytes = 2 per rank x 1 ranks is smaller than one f32 element" $A --sizes 2 --scaling weak
expect_error "message size 88.8P (99999999999999999 bytes): its buffers need" $A --sizes 99999999999999999
expect_error "message size 799P (900000000000000000 bytes): its buffers need" $A --sizes 8,900000000000000000
expect_error "leaves each of its ranks" $A --sizes 1024G --no-membw
expect_error "size '18446744073709551616' does not fit in 64 bits" $A --sizes 18446744073709551616
expect_error "size '17179869184G' does not fit in 64 bits" $A -e 17179869184G
expect_error "does not fit in 64 bits"  $A --sizes 8,18014398509481984K
expect_error "unknown suffix 'e3'"      $A --sizes 1e3
expect_error "not a whole number of bytes" $A --sizes 1.5
expect_error "too close to 1"           $A -b 1 -e 1G -f 1.000001
expect_error "SCALEPROBE_LLC_BYTES='big'" env SCALEPROBE_LLC_BYTES=big $A --sizes 8 -n 1
expect_error "malformed bucket cap"      $B -c 1,abc
expect_error "--scaling"                 $B --scaling medium
expect_error "empty item"                $B -c 1,,2
expect_error "cannot open gradient layout file" $B -l /nonexistent/layout.txt
printf 'w 64x0\n' > "$tmp/bad_layout.txt"
expect_error "bad_layout.txt:1"          $B -l "$tmp/bad_layout.txt"
expect_error "--dtype"                   $B -d i8
# Layout sizes are overflow-checked (issue 14: this line wrapped the byte count to 0, allocated
# 1 byte and wrote past it), and a layout larger than memory is refused before allocating.
printf '4611686018427387904\n' > "$tmp/huge_layout.txt"
expect_error "huge_layout.txt:1: the layout would hold more than" $B -l "$tmp/huge_layout.txt"
printf 'a 8\nw 4294967296x4294967296\n' > "$tmp/wrap_layout.txt"
expect_error "wrap_layout.txt:2: tensor shape '4294967296x4294967296' has more elements" $B -l "$tmp/wrap_layout.txt"
printf 'w 1024x1024x1024x1024\n' > "$tmp/big_layout.txt"
expect_error "1099511627776 elements of f32 need" $B -l "$tmp/big_layout.txt"
expect_error "trace file not found"      $core/trace_check "$tmp/missing.h5"
head -c 2000 /dev/urandom > "$tmp/garbage.h5"
expect_error "not a readable HDF5 file"  $core/trace_check "$tmp/garbage.h5"
touch "$tmp/run.h5.partial"
expect_error "incomplete trace"          $core/trace_check "$tmp/run.h5.partial"
# Accepted flags take effect: --off-cache evicts the gradients before every timed iteration of
# bucket_sweep (issue 14 found it ignored): 3 iterations x 1024 f32 = 12288 bytes, none without.
printf 'a 1000\nb 24\n' > "$tmp/tiny_layout.txt"
check_attribute() {  # <name> <wanted> <trace>
  checks=$((checks + 1))
  local got; got=$($core/trace_check --attribute "$1" "$3")
  if [ "$got" != "$2" ]; then echo "FAIL: $3: attribute $1 = '$got', wanted '$2'"; failures=$((failures + 1)); fi
}
for flag in --off-cache ""; do
  if $B -l "$tmp/tiny_layout.txt" -c all -a ring -n 3 -w 1 -q $flag -o "$tmp/bs.h5" >/dev/null; then
    check_attribute off_cache "$([ -n "$flag" ] && echo 1 || echo 0)" "$tmp/bs.h5"
    check_attribute off_cache_evicted_bytes "$([ -n "$flag" ] && echo 12288 || echo 0)" "$tmp/bs.h5"
  else
    echo "FAIL: bucket_sweep $flag on a tiny layout did not run"; failures=$((failures + 1))
  fi
done
# The main local job checks SCALEPROBE_NP before its minutes of install and build: a copy of it
# whose install step is a stub that fails, so a check that lets the value through fails here.
mkdir -p "$tmp/job/scripts"
cp "$(dirname "$0")/../../scripts/run-local.sh" "$tmp/job/scripts/"
printf '#!/bin/sh\necho "reached the install step" >&2; exit 1\n' > "$tmp/job/scripts/install-deps.sh"
chmod +x "$tmp/job/scripts/install-deps.sh"
for np in 1 65 two; do
  expect_error "SCALEPROBE_NP=$np: expected a whole number of ranks from 2 to 64" env SCALEPROBE_NP=$np "$tmp/job/scripts/run-local.sh"
done
# --help is not an error.
expect_help "--sizes" $A
finish cli_errors
