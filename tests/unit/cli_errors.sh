#!/usr/bin/env bash
# Bad command-line input must give a non-zero exit and exactly one line on stderr naming the
# problem. Usage: cli_errors.sh <collectives bin dir> <core bin dir>
set -u
coll=$1 core=$2
source "$(dirname "$0")/../lib/expect_error.sh"
A=$coll/allreduce_perf B=$coll/bucket_sweep
expect_error "malformed size 'x'"        $A --sizes 8,x
expect_error "empty item"                $A --sizes 8,,16
expect_error "unknown suffix"            $A -e 64Q
expect_error "larger than maximum"       $A -b 1M -e 1K
expect_error "factor must be greater"    $A -f 1
expect_error "--iters"                   $A -n -3
expect_error "--warmup"                  $A -w -5
expect_error "--sync"                    $A --sync sometimes
expect_error "unknown algorithm 'foo'"   $A -a ring,foo
expect_error "unknown dtype 'f16'"       $A -d f16
expect_error "--op"                      $A --op prod
expect_error "--chunk must be"           $A --chunk 0
expect_error "not expected"              $A --bogus
expect_error "cannot create trace"       $A --sizes 8 -n 1 -o /proc/forbidden/x.h5 --no-membw
expect_error "--scaling"                 $A --scaling medium
expect_error "--membw-bytes 1K: at least 4K" $A --membw-bytes 1K
expect_error "--membw-bytes: malformed size" $A --membw-bytes lots
expect_error "exceed this machine's"     $A --membw-bytes 900G
expect_error "exceeds this machine's"    $A --sizes 8,900000000000000000
expect_error "SCALEPROBE_LLC_BYTES='big'" env SCALEPROBE_LLC_BYTES=big $A --sizes 8 -n 1
expect_error "malformed bucket cap"      $B -c 1,abc
expect_error "--scaling"                 $B --scaling medium
expect_error "empty item"                $B -c 1,,2
expect_error "cannot open gradient layout file" $B -l /nonexistent/layout.txt
printf 'w 64x0\n' > "$tmp/bad_layout.txt"
expect_error "bad_layout.txt:1"          $B -l "$tmp/bad_layout.txt"
expect_error "--dtype"                   $B -d i8
expect_error "trace file not found"      $core/trace_check "$tmp/missing.h5"
head -c 2000 /dev/urandom > "$tmp/garbage.h5"
expect_error "not a readable HDF5 file"  $core/trace_check "$tmp/garbage.h5"
touch "$tmp/run.h5.partial"
expect_error "incomplete trace"          $core/trace_check "$tmp/run.h5.partial"
# --help is not an error.
expect_help "--sizes" $A
finish cli_errors
