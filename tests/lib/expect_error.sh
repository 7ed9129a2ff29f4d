# shellcheck shell=bash
# Shared by the command-line error tests (source it): bad input must give a non-zero exit and
# exactly one line on stderr naming the problem.
#   expect_error <text the one line must contain> <command...>
#   expect_help <text the help must contain> <command...>     (--help is not an error)
#   finish <test name>                                        (prints "N passed, M failed"; status)
# and, for the trainers, the errors of the options they share (trainers/common, trainers/dp):
#   expect_data_parallel_errors <trainer command...>          (one step)
#   expect_checkpoint_errors <trainer command...>             (see below)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0 checks=0
expect_error() {
  local pattern=$1; shift
  checks=$((checks + 1))
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  local lines; lines=$(grep -c . "$tmp/err")
  if [ $rc -eq 0 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$pattern" "$tmp/err"; then
    echo "FAIL: '$*' rc=$rc, $lines stderr line(s), wanted one containing '$pattern':"; sed 's/^/    /' "$tmp/err"
    failures=$((failures + 1))
  fi
}
expect_help() {
  local pattern=$1; shift
  checks=$((checks + 1))
  if ! "$@" --help >"$tmp/out" 2>&1 || ! grep -qF -- "$pattern" "$tmp/out"; then
    echo "FAIL: '$* --help' failed or lacks '$pattern'"; failures=$((failures + 1))
  fi
}
finish() {
  echo "$1: $((checks - failures)) passed, $failures failed"
  [ $failures -eq 0 ]
}

# The data-parallel engine's option errors (trainers/dp/options.hpp); the command runs one step.
expect_data_parallel_errors() {
  expect_error "unknown algorithm 'hypercube'"          "$@" -a ring,hypercube
  expect_error "--bucket-cap-mb"                        "$@" --bucket-cap-mb 25,,5
  expect_error "--global-batch 6 is not divisible by ranks x --accum-steps = 1 x 4" "$@" --global-batch 6 --accum-steps 4
  expect_error "--batch 6 is not divisible by --accum-steps 4" "$@" -B 6 --accum-steps 4
  expect_error "excludes"                               "$@" -B 4 --global-batch 8
  expect_error "--scaling weak and --global-batch exclude each other" "$@" --scaling weak --global-batch 8
  expect_error "--scaling"                              "$@" --scaling medium
  expect_error "--batch (the global batch under --scaling strong) 6 is not divisible by ranks x --accum-steps = 1 x 4" \
    "$@" --scaling strong -B 6 --accum-steps 4
  expect_error "--local-sgd and --accum-steps > 1 exclude each other" "$@" -B 4 --local-sgd 2 --accum-steps 2
  expect_error "--algorithm shm: local SGD averages parameters with a point-to-point schedule" "$@" -B 4 --local-sgd 2 -a ring,shm
  expect_error "--inject-fault 'crash:0:1'"             "$@" --inject-fault crash:0:1
  # --shard (trainers/dp/shard.hpp).
  expect_error "--shard optimizer and --local-sgd exclude each other" "$@" -B 4 --shard optimizer --local-sgd 2
  expect_error "--shard gradients and --no-comm exclude each other" "$@" -B 4 --shard gradients --no-comm
  expect_error "--shard optimizer runs on --algorithm ring with one --bucket-cap-mb (got --algorithm ring,tree, --bucket-cap-mb 25)" \
    "$@" --shard optimizer -a ring,tree
  expect_error "(got --algorithm mpi, --bucket-cap-mb 25)" "$@" --shard optimizer -a mpi
  expect_error "(got --algorithm ring, --bucket-cap-mb 1,5)" "$@" --shard gradients --bucket-cap-mb 1,5
  expect_error "--shard"                                "$@" --shard everything
  expect_error "--shard-gather"                         "$@" --shard optimizer --shard-gather later
  # Overlap modes (trainers/dp/overlap.hpp): exit 2, one line.
  expect_error "--overlap"                              "$@" --overlap sometimes
  expect_error "--no-overlap and --overlap thread contradict each other" "$@" --no-overlap --overlap thread
  expect_error "--no-comm and --local-sgd exclude each other" "$@" -B 4 --no-comm --local-sgd 2
  expect_error "there is no gradient allreduce to overlap" "$@" -B 4 --local-sgd 2 --overlap progress
  expect_error "--comm-core 4096 is outside this rank's binding" "$@" --comm-core 4096
  expect_error "--comm-core is the communication thread's core; --overlap none has no such thread" \
    "$@" --comm-core 0 --overlap none
  if "$@" --help 2>/dev/null | grep -q '{mpi,gloo'; then
    expect_error "--overlap progress: the gloo transport cannot advance an allreduce without blocking" \
      "$@" --backend gloo --overlap progress
  fi
}

# The checkpoint errors every trainer shares (trainers/common): a missing, garbage or truncated
# file, a checkpoint already at --steps, other data, --resume with --init-from, --stop-after not
# after the checkpoint. The command takes -s and writes its trace to $tmp/t.h5. Leaves the
# checkpoint of a 2-step run in $tmp/ck.h5 for the trainer's own checks; returns 1 (a failure)
# if it cannot make one.
expect_checkpoint_errors() {
  expect_error "cannot load checkpoint '$tmp/missing.h5': no such file" "$@" -s 2 --resume "$tmp/missing.h5"
  # Paths the checkpoint cannot be written to: refused before the first step, not after the last.
  expect_error "--save $tmp: is a directory"             "$@" -s 2 --save "$tmp"
  expect_error "--save-init $tmp/none/i.h5: no folder $tmp/none" "$@" -s 2 --save-init "$tmp/none/i.h5"
  head -c 3000 /dev/urandom > "$tmp/garbage.h5"
  expect_error "not a readable HDF5 file"               "$@" -s 2 --resume "$tmp/garbage.h5"
  if ! "$@" -s 2 --save "$tmp/ck.h5" >/dev/null 2>"$tmp/err"; then
    echo "FAIL: could not make a checkpoint:"; sed 's/^/    /' "$tmp/err"; failures=$((failures + 1))
    return 1
  fi
  head -c $(( $(stat -c %s "$tmp/ck.h5") / 2 )) "$tmp/ck.h5" > "$tmp/trunc.h5"
  expect_error "cannot load checkpoint"                 "$@" -s 4 --resume "$tmp/trunc.h5"
  expect_error "nothing to do for --steps 2"            "$@" -s 2 --resume "$tmp/ck.h5"
  expect_error "the checkpoint was trained on"          "$@" -s 4 --resume "$tmp/ck.h5" --data-seed 7
  expect_error "--resume and --init-from"               "$@" -s 4 --resume "$tmp/ck.h5" --init-from "$tmp/ck.h5"
  expect_error "--stop-after 2 is not after the checkpoint's step 2" "$@" -s 4 --resume "$tmp/ck.h5" --stop-after 2
}
