#!/usr/bin/env bash
# gpt_train's error paths: bad input must give a non-zero exit and exactly one line on stderr
# naming the problem. Usage: gpt_cli_errors.sh <path to gpt_train>
set -u
G=$1
source "$(dirname "$0")/../lib/expect_error.sh"
M="$G -m gpt-micro -B 2 --synthetic-bytes 20000 -o $tmp/t.h5"
expect_error "heads (5) must divide the width (32)"   $M -s 1 --heads 5
expect_error "vocab size must be at least 2 (got 1)"     $M -s 1 --vocab 1
expect_error "--steps"                                $M -s 0
expect_error "--steps is required"                    $M
expect_error "unknown model 'gpt-huge'"               $G -m gpt-huge -s 1
expect_error "cannot read data file '$tmp/none.txt'"  $M -s 1 --data "$tmp/none.txt"
: > "$tmp/empty.txt"
expect_error "is empty"                               $M -s 1 --data "$tmp/empty.txt"
printf 'hello' > "$tmp/short.txt"
expect_error "data too short"                         $G -m gpt-tiny -s 1 --data "$tmp/short.txt" -o "$tmp/t.h5"
printf 'caf\xc3\xa9 au lait %.0s' $(seq 200) > "$tmp/utf8.txt"
expect_error "does not fit the vocabulary of 128"     $M -s 1 --data "$tmp/utf8.txt"
expect_error "--seq-len 17 exceeds the context length 16" $M -s 1 -T 17
expect_error "--save-every needs --save"              $M -s 2 --save-every 1
expect_error "GiB of activations"                    $G -m gpt-mini -s 1 -B 100000 -o "$tmp/t.h5"
expect_error "cannot create trace"                    $G -m gpt-micro -B 2 --synthetic-bytes 20000 -s 1 -o /proc/forbidden/x.h5
expect_error "not expected"                           $M -s 1 --bogus
# Data-parallel options.
N="$G -m gpt-micro --synthetic-bytes 20000 -o $tmp/t.h5 -s 1"
expect_error "unknown algorithm 'hypercube'"          $N -a ring,hypercube
expect_error "--bucket-cap-mb"                        $N --bucket-cap-mb 25,,5
expect_error "--bucket-cap-mb"                        $N --bucket-cap-mb -3
expect_error "--global-batch 6 is not divisible by ranks x --accum-steps = 1 x 4" $N --global-batch 6 --accum-steps 4
expect_error "--batch 6 is not divisible by --accum-steps 4" $N -B 6 --accum-steps 4
expect_error "excludes"                               $N -B 4 --global-batch 8
expect_error "--local-sgd and --accum-steps > 1 exclude each other" $N -B 4 --local-sgd 2 --accum-steps 2
expect_error "--inject-fault 'crash:0:1'"             $N --inject-fault crash:0:1
expect_error "--inject-fault: rank 3 does not exist (1 ranks)" $N --inject-fault exit:3:1
# Checkpoints: missing, garbage, truncated, another model, finished, other data.
expect_error "cannot load checkpoint '$tmp/missing.h5': no such file" $M -s 2 --resume "$tmp/missing.h5"
head -c 3000 /dev/urandom > "$tmp/garbage.h5"
expect_error "not a readable HDF5 file"               $M -s 2 --resume "$tmp/garbage.h5"
if $M -s 2 --save "$tmp/ck.h5" >/dev/null 2>"$tmp/err"; then
  head -c $(( $(stat -c %s "$tmp/ck.h5") / 2 )) "$tmp/ck.h5" > "$tmp/trunc.h5"
  expect_error "cannot load checkpoint"               $M -s 4 --resume "$tmp/trunc.h5"
  expect_error "--width 64 differs from the --resume checkpoint's 32" $M -s 4 --resume "$tmp/ck.h5" --width 64
  expect_error "nothing to do for --steps 2"          $M -s 2 --resume "$tmp/ck.h5"
  expect_error "the checkpoint was trained on"        $M -s 4 --resume "$tmp/ck.h5" --data-seed 7
  expect_error "--resume and --init-from"             $M -s 4 --resume "$tmp/ck.h5" --init-from "$tmp/ck.h5"
  expect_error "--model gpt-tiny differs from the --init-from checkpoint's model gpt-micro" $G -B 2 --synthetic-bytes 20000 -o "$tmp/t.h5" -s 4 --init-from "$tmp/ck.h5" -m gpt-tiny
  expect_error "--stop-after 2 is not after the checkpoint's step 2" $M -s 4 --resume "$tmp/ck.h5" --stop-after 2
  expect_error "not a scaleprobe GPT checkpoint"      $M -s 4 --init-from "$tmp/t.h5"
else
  echo "FAIL: could not make a checkpoint:"; sed 's/^/    /' "$tmp/err"; failures=$((failures + 1))
fi
# --help is not an error.
expect_help "--resume" $G
finish gpt_cli_errors
