#!/usr/bin/env bash
# resnet_train's error paths: bad input must give a non-zero exit and exactly one line on stderr
# naming the problem. Usage: resnet_cli_errors.sh <path to resnet_train>
set -u
R=$1
# shellcheck source=../lib/expect_error.sh
source "$(dirname "$0")/../lib/expect_error.sh"
M="$R --depth 8 --width 4 -B 4 --synthetic-images 64 --synthetic-test 16 -o $tmp/t.h5"
M0="$R --synthetic-images 64 --synthetic-test 16 -o $tmp/t.h5"
expect_error "unknown model 'resnet99' (choose from resnet20, resnet32, resnet56, resnet18)" $R -m resnet99 -s 1
expect_error "depth 9 is not 6n+2"                     $M0 -s 1 --depth 9
expect_error "depth 20 is not 10, 18 or 34"            $R -m resnet18 --depth 20 -s 1 -o "$tmp/t.h5"
expect_error "--steps"                                 $M -s 0
expect_error "--steps is required"                     $M
expect_error "--lr: nan is not a finite number"        $M -s 1 --lr nan
expect_error "--momentum: inf is not a finite number"  $M -s 1 --momentum inf
expect_error "--width: Value 0 not in range 1 to"       $M0 -s 1 --width 0
expect_error "not expected"                            $M -s 1 --bogus
expect_error "--schedule 'linear': choose cosine or step" $M -s 1 --schedule linear
expect_error "--lr-steps needs --schedule step"        $M -s 4 --lr-steps 2
expect_error "--lr-steps: 'x' is not a positive step number" $M -s 4 --schedule step --lr-steps 2,x
expect_error "--lr-steps: 2 after 3 (the steps must increase)" $M -s 4 --schedule step --lr-steps 3,2
expect_error "--lr-steps: 4 is not before --steps 4 (it would never apply)" $M -s 4 --schedule step --lr-steps 2,4
expect_error "--save-every needs --save"               $M -s 2 --save-every 1
expect_error "smaller than the global batch of 128"    $M0 --depth 8 --width 4 -s 1 -B 128
expect_error "GiB of activations"                      $R -m resnet18 -s 1 -B 100000 -o "$tmp/t.h5"
expect_error "cannot create trace"                     $R --depth 8 --width 4 -B 4 --synthetic-images 64 -s 1 -o /proc/forbidden/x.h5
# CIFAR-10 directory: missing, a file missing, a corrupt file (wrong size, bad label).
expect_error "CIFAR-10 directory '$tmp/nocifar' does not exist" $M -s 1 --data "$tmp/nocifar"
mkdir -p "$tmp/cifar"
for i in 1 2 3 4 5; do head -c $((3073 * 4)) /dev/zero > "$tmp/cifar/data_batch_$i.bin"; done
expect_error "test_batch.bin' is missing"               $M -s 1 --data "$tmp/cifar"
head -c 5000 /dev/zero > "$tmp/cifar/test_batch.bin"
expect_error "has 5000 bytes, not a positive multiple of the 3073-byte record" $M -s 1 --data "$tmp/cifar"
{ printf '\x0b'; head -c 3072 /dev/zero; } > "$tmp/cifar/test_batch.bin"
expect_error "record 0 has label 11 (expected 0..9)"   $M -s 1 --data "$tmp/cifar"
# Data-parallel options.
expect_data_parallel_errors $R --depth 8 --width 4 --synthetic-images 64 -o "$tmp/t.h5" -s 1
# Checkpoints: the shared errors, then another model, augmentation changed and a foreign file.
if expect_checkpoint_errors $M; then
  expect_error "--width 8 differs from the --resume checkpoint's 4" $M0 -B 4 -s 4 --resume "$tmp/ck.h5" --width 8
  expect_error "the checkpoint was trained on"         $M -s 4 --resume "$tmp/ck.h5" --augment
  expect_error "--model resnet18 differs from the --init-from checkpoint's model resnet20-custom" $R -B 4 --synthetic-images 64 -o "$tmp/t.h5" -s 4 --init-from "$tmp/ck.h5" -m resnet18
  expect_error "not a scaleprobe ResNet checkpoint"    $M -s 4 --init-from "$tmp/t.h5"
fi
# --help is not an error.
expect_help "--bn-eval" $R
finish resnet_cli_errors
