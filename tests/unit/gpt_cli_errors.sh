#!/usr/bin/env bash
# gpt_train's error paths: bad input must give a non-zero exit and exactly one line on stderr
# naming the problem. Usage: gpt_cli_errors.sh <path to gpt_train>
set -u
G=$1
# shellcheck source=../lib/expect_error.sh
source "$(dirname "$0")/../lib/expect_error.sh"
M="$G -m gpt-micro -B 2 --synthetic-bytes 20000 -o $tmp/t.h5"
expect_error "heads (5) must divide the width (32)"   $M -s 1 --heads 5
expect_error "vocab size must be at least 2 (got 1)"     $M -s 1 --vocab 1
expect_error "--steps"                                $M -s 0
expect_error "--steps is required"                    $M
# Real values: a NaN passes CLI11's < and > comparisons; our check refuses it up front.
expect_error "--lr: nan is not a finite number"       $M -s 1 --lr nan
expect_error "--lr: 0 is not > 0"                     $M -s 1 --lr 0
expect_error "--beta2: nan is not a finite number"    $M -s 1 --beta2 nan
expect_error "--min-lr-frac: 2 is not in [0 - 1]"     $M -s 1 --min-lr-frac 2
expect_error "--depth: Value 0 not in range 1 to"      $M -s 1 --depth 0
expect_error "--seed: Value -1 not in range 0 to 9223372036854775807" $M -s 1 --seed -1
expect_error "--seq-len: Value 0 not in range 1 to"    $M -s 1 -T 0
expect_error "--stop-after: Value 0 not in range 1 to" $M -s 1 --stop-after 0
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
expect_data_parallel_errors $N
expect_error "--bucket-cap-mb"                        $N --bucket-cap-mb -3
expect_error "--inject-fault: rank 3 does not exist (1 ranks)" $N --inject-fault exit:3:1
# Pipeline parallelism at one rank (more stages than layers and replicas: tests/mpi/test_pipeline.cpp).
expect_error "--pipeline-stages 2: 1 rank(s) are not divisible by the stages" $N --pipeline-stages 2
expect_error "--micro-batches: Value 0 not in range"  $N --pipeline-stages 1 --micro-batches 0
expect_error "--micro-batches 3 does not divide the 2 rows of a step" $N --pipeline-stages 1 -B 2 --micro-batches 3
expect_error "--shard optimizer and --pipeline-stages exclude each other" $N --pipeline-stages 1 --shard optimizer
expect_error "--local-sgd and --pipeline-stages exclude each other" $N --pipeline-stages 1 --local-sgd 2
expect_error "--accum-steps and --pipeline-stages exclude each other" $N --pipeline-stages 1 --accum-steps 2
expect_error "--inject-fault and --pipeline-stages exclude each other" $N --pipeline-stages 1 --inject-fault exit:0:1
expect_error "--no-comm and --pipeline-stages exclude each other" $N --pipeline-stages 1 --no-comm
expect_error "--overlap thread: a pipeline stage sends and receives on its compute thread" $N --pipeline-stages 1 --overlap thread
expect_error "--micro-batches requires --pipeline-stages" $N --micro-batches 2
expect_error "--schedule"                             $N --pipeline-stages 1 --schedule zigzag
# Checkpoints: the shared errors, then another model and a foreign file.
if expect_checkpoint_errors $M; then
  expect_error "--width 64 differs from the --resume checkpoint's 32" $M -s 4 --resume "$tmp/ck.h5" --width 64
  expect_error "--model gpt-tiny differs from the --init-from checkpoint's model gpt-micro" $G -B 2 --synthetic-bytes 20000 -o "$tmp/t.h5" -s 4 --init-from "$tmp/ck.h5" -m gpt-tiny
  expect_error "not a scaleprobe GPT checkpoint"      $M -s 4 --init-from "$tmp/t.h5"
fi
# --help is not an error.
expect_help "--resume" $G
finish gpt_cli_errors
