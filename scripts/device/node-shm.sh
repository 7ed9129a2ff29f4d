#!/bin/bash
# The node-local allreduces on the 16-core GPU node (issue 27's 16-rank targets): allreduce_perf
# with MPI_Allreduce, ring, shm and shm-seg in the same run, 2, 4, 8 and N ranks (N = nproc), each
# bound to one core, SP_PASSES passes (default 3) with the rank counts' order rotated each pass;
# then hier beside MPI_Allreduce and ring at N ranks split into 2 and 4 nodes (node keys); then the
# point-to-point schedules at small sizes, recursive doubling among them, at N ranks
# (SP_SMALL_SIZES, default 8,1K,16K,64K).
#
# On the GPU node (repository root; the bundle made here by
#   ../shared/device/make-bundle.sh build/release   carried as .device):
#     scripts/device/node-shm.sh
# Here, to try it (2 cores):  OUT=/tmp/node-shm SP_BIN=build/release/bin SP_RANKS=2 SP_SIZES=8,64K scripts/device/node-shm.sh
# Writes into $OUT: node-shm.tgz (node-shm/: node.txt = date, nproc, lscpu, MPI; raw/ = every run's
# printed table and --json summary; its HDF5 trace too with SP_KEEP_TRACES=1 — at 16 ranks one trace
# is about 17 MB, over the 16 MiB a file may bring back) and node-shm.log. Wall time about SP_BUDGET_S
# (default 300): no run starts after it, and each run has SP_RUN_TIMEOUT_S (default 120).
# Then, here: unpack under results/<date>-<node>-shm-node/raw/ and summarise with a copy of
# results/2026-11-27-vm-f6m207-shm-node/summarize.py (it reads the printed tables).
set -uo pipefail
t0=$(date +%s)
OUT=${OUT:?"OUT: the folder whose files come back"}
mkdir -p "$OUT/node-shm/raw"
traces=$OUT/node-shm/raw
[ "${SP_KEEP_TRACES:-0}" = 1 ] || traces=$(mktemp -d)
exec > >(tee -a "$OUT/node-shm.log") 2>&1
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
read -r -a ranks <<<"$(echo "${SP_RANKS:-2 4 8 $n}" | tr ',' ' ')"
sizes=${SP_SIZES:-8,1K,64K,1M,16M,64M}
budget=${SP_BUDGET_S:-300}
run_limit=${SP_RUN_TIMEOUT_S:-120}
{ date -u; echo "nproc $n"; lscpu; mpirun --version | head -1; } >"$OUT/node-shm/node.txt" 2>&1
for pass in $(seq 1 "${SP_PASSES:-3}"); do
  for k in "${!ranks[@]}"; do
    np=${ranks[$(( (k + pass - 1) % ${#ranks[@]} ))]}
    [ "$np" -gt "$n" ] && continue
    if [ $(( $(date +%s) - t0 )) -ge "$budget" ]; then el "budget spent: pass $pass, $np ranks not run"; continue; fi
    base=$OUT/node-shm/raw/np${np}_p${pass}
    el "pass $pass: $np ranks"
    timeout -k 5 "$run_limit" mpirun -np "$np" --bind-to core --map-by core "$SP_BIN/allreduce_perf" -a mpi,ring,shm,shm-seg \
      --sizes "$sizes" -o "$traces/$(basename "$base").h5" --json "$base.json" >"$base.log" 2>&1
    el "  exit $? ($(grep -c ' shm' "$base.log") shm rows)"
  done
done
# hier at N ranks split into 2 and 4 nodes by node key (consecutive cores form a node), beside
# MPI_Allreduce and ring in the same run (issue 27: hier <= 0.7 x ring from 1 MiB).
for pass in $(seq 1 "${SP_PASSES:-3}"); do
  for nodes in 2 4; do
    [ $(( n % nodes )) -eq 0 ] && [ "$n" -gt "$nodes" ] || continue
    if [ $(( $(date +%s) - t0 )) -ge "$budget" ]; then el "budget spent: hier pass $pass, $nodes nodes not run"; continue; fi
    base=$OUT/node-shm/raw/hier_n${nodes}_np${n}_p${pass}
    el "pass $pass: hier, $n ranks as $nodes nodes"
    timeout -k 5 "$run_limit" mpirun -np "$n" --bind-to core --map-by core bash -c \
      'SCALEPROBE_NODE_KEY=$(( OMPI_COMM_WORLD_RANK / ('"$n"' / '"$nodes"') )) exec "$0" "$@"' \
      "$SP_BIN/allreduce_perf" -a mpi,ring,hier --sizes "$sizes" -o "$traces/$(basename "$base").h5" --json "$base.json" >"$base.log" 2>&1
    el "  exit $? ($(grep -c ' hier' "$base.log") hier rows)"
  done
done
# Small messages at N ranks: recursive doubling (log2 N exchanges) beside tree, ring, Rabenseifner
# and MPI_Allreduce in the same run.
for pass in $(seq 1 "${SP_PASSES:-3}"); do
  if [ $(( $(date +%s) - t0 )) -ge "$budget" ]; then el "budget spent: small pass $pass not run"; continue; fi
  base=$OUT/node-shm/raw/small_np${n}_p${pass}
  el "pass $pass: small messages, $n ranks"
  timeout -k 5 "$run_limit" mpirun -np "$n" --bind-to core --map-by core "$SP_BIN/allreduce_perf" \
    -a mpi,tree,ring,rabenseifner,doubling --sizes "${SP_SMALL_SIZES:-8,1K,16K,64K}" \
    -o "$traces/$(basename "$base").h5" --json "$base.json" >"$base.log" 2>&1
  el "  exit $? ($(grep -c ' doubling' "$base.log") doubling rows)"
done
tar -czf "$OUT/node-shm.tgz" -C "$OUT" node-shm && rm -rf "$OUT/node-shm"
[ "$traces" = "$OUT/node-shm/raw" ] || rm -rf "$traces"
el "done: $OUT/node-shm.tgz"
