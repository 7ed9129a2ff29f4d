#!/bin/bash
# The GPU node's short checks beside node-scaling.sh and node-shm.sh, each with its own timeout:
#   1. the GPU path: test_gpu_reduce, allreduce_perf --backend nccl -a all, and collective_perf
#      --backend nccl -a all -d all for each of the other collectives (issue 29; 1 rank: NCCL refuses
#      two ranks on one GPU);
#   2. the BLAS core (issue 25 item 3): gpt_train gpt-tiny at 1 rank with the core scaleprobe
#      chooses beside Cooperlake, SkylakeX and Haswell forced, SP_PASSES (2) interleaved passes;
#   3. the engine with shm (issue 27): gpt_train gpt-tiny, 8 rows per rank, at N ranks (N = nproc),
#      cap 25, ring, shm and shm-seg (the gradients reduced in place in the node segment) cycled
#      step by step in one run, SP_PASSES runs each with shm-seg's buckets streamed (the default)
#      and with --no-stream-buckets, in alternating order;
#  3b. the same in thread mode: N/2 ranks bound to two cores each (the communication thread on the
#      second), ring and shm-seg, streamed and not;
#   4. p2p_perf at N ranks (N/2 pairs, each on its own cores) on MPI.
#
# On the GPU node (repository root; the bundle made here by
#   ../shared/device/make-bundle.sh build/release build/release/tests/test_gpu_reduce   carried as .device):
#     scripts/device/node-extras.sh
# Here, to try it (2 cores, no GPU: part 1 reports it skipped):
#     OUT=/tmp/node-extras SP_BIN=build/release/bin SP_STEPS=3 scripts/device/node-extras.sh
# Writes into $OUT: node-extras.tgz (node-extras/: node.txt, raw/ = every run's trace and log) and
# node-extras.log. No part starts after SP_BUDGET_S (default 150) seconds.
set -uo pipefail
t0=$(date +%s)
OUT=${OUT:?"OUT: the folder whose files come back"}
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
node_output node-extras
nvidia-smi -L >>"$OUT/node-extras/node.txt" 2>&1
budget=${SP_BUDGET_S:-150}
passes=${SP_PASSES:-2}
steps=${SP_STEPS:-12}
late() { [ $(( $(date +%s) - t0 )) -ge "$budget" ] && { el "budget spent: $1 not run"; return 0; }; return 1; }
run() {  # run NAME TIMEOUT_S COMMAND...: log to raw/NAME.log, print the exit status
  local name=$1 limit=$2; shift 2
  late "$name" && return
  timeout -k 5 "$limit" "$@" >"$raw/$name.log" 2>&1
  el "$name: exit $?"
}

el "1. GPU path"
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  gpu_test=$SP_BIN/test_gpu_reduce
  [ -x "$gpu_test" ] && run gpu_reduce_test 60 "$gpu_test"
  run nccl_allreduce 90 mpirun -np 1 "$SP_BIN/allreduce_perf" --backend nccl -a all --sizes 8,64K,1M,16M,256M \
    -o "$raw/nccl_allreduce.h5"
  for c in reduce_scatter all_gather broadcast reduce all_to_all all_to_allv; do
    run "nccl_$c" 60 mpirun -np 1 "$SP_BIN/collective_perf" --backend nccl -c "$c" -a all -d all \
      --sizes 8,64K,1M,16M -n 20 -w 5 -o "$raw/nccl_$c.h5"
  done
else
  el "no GPU here: part 1 skipped"
fi

el "2. BLAS core at 1 rank (gpt-tiny, 8 rows, $steps steps)"
for pass in $(seq 1 "$passes"); do
  for core in chosen Cooperlake SkylakeX Haswell; do
    # OpenBLAS' AVX-512 cores where the CPU has AVX-512 only (SkylakeX forced elsewhere is refused).
    if [ "$core" = Cooperlake ] || [ "$core" = SkylakeX ]; then
      grep -qw avx512f /proc/cpuinfo || { el "blas_${core}_p$pass: skipped (no AVX-512 here)"; continue; }
    fi
    if [ "$core" = chosen ]; then
      run "blas_${core}_p$pass" 60 env -u OPENBLAS_CORETYPE mpirun -np 1 --bind-to core "$SP_BIN/gpt_train" -m gpt-tiny \
        -B 8 -s "$steps" --val-batches 0 -o "$raw/blas_${core}_p$pass.h5"
    else
      run "blas_${core}_p$pass" 60 mpirun -np 1 --bind-to core -x OPENBLAS_CORETYPE="$core" "$SP_BIN/gpt_train" \
        -m gpt-tiny -B 8 -s "$steps" --val-batches 0 -o "$raw/blas_${core}_p$pass.h5"
    fi
    grep -m1 -E 'ms/iteration' "$raw/blas_${core}_p$pass.log"
  done
done

# The engine at cap 25 with shm-seg's buckets streamed (the default) and with --no-stream-buckets,
# in alternating order from pass to pass:
#   stream_sides STEM RANKS STEPS MPIRUN_OPTION... -- GPT_TRAIN_OPTION...
stream_sides() {
  local stem=$1 ranks=$2 run_steps=$3 pass side sides name
  shift 3
  local -a launch=() flag
  while [ "$1" != -- ]; do launch+=("$1"); shift; done
  shift
  for pass in $(seq 1 "$passes"); do
    sides="stream nostream"; [ $(( pass % 2 )) -eq 0 ] && sides="nostream stream"
    for side in $sides; do
      flag=(); name="${stem}_np${ranks}_p$pass"
      [ "$side" = nostream ] && flag=(--no-stream-buckets) && name="${stem}_nostream_np${ranks}_p$pass"
      run "$name" 90 mpirun -np "$ranks" "${launch[@]}" "$SP_BIN/gpt_train" -m gpt-tiny -B 8 -s "$run_steps" \
        --val-batches 0 --bucket-cap-mb 25 "$@" "${flag[@]}" -o "$raw/$name.h5"
      grep -E 'overlap:|ms/iteration' "$raw/$name.log"
    done
  done
}

el "3. engine: ring, shm and shm-seg cycled, $n ranks, cap 25, shm-seg streamed and not"
stream_sides engine "$n" $(( 3 * steps )) --bind-to core --map-by core -- -a ring,shm,shm-seg
half=$(( n / 2 ))
el "3b. engine in thread mode: $half ranks with two cores each (the second the communication thread's), ring and shm-seg"
stream_sides thread "$half" $(( 2 * steps )) --map-by slot:PE=2 --bind-to core -- --overlap thread -a ring,shm-seg

el "4. p2p_perf, $n ranks"
[ $(( n % 2 )) -eq 0 ] && run "p2p_np$n" 60 mpirun -np "$n" --bind-to core --map-by core "$SP_BIN/p2p_perf" \
  --sizes 8,1K,64K,1M,4M -o "$raw/p2p_np$n.h5"

tar -czf "$OUT/node-extras.tgz" -C "$OUT" node-extras
rm -rf "$OUT/node-extras"
el "done: $OUT/node-extras.tgz"
