#!/usr/bin/env bash
# Gloo against MPI in the same run (issue 17): 2 ranks, f32 sum, 1 KiB - 64 MiB by factors of 4.
# Each pass runs, in an order that alternates between passes:
#   unbound  allreduce_perf --backend gloo -a all, ranks not bound (Gloo's network thread may use
#            the other core): MPI_Allreduce, Gloo's own allreduce and the four schedules on Gloo;
#   bound    the same with --bind-to core (each rank and its Gloo thread on one core);
#   mpi      allreduce_perf --backend mpi -a all, unbound: the schedules on MPI;
#   torch    PyTorch's Gloo allreduce (torch.distributed), ranks spawned by hand, unbound.
# Every pass's JSON (rows + provenance) and table is kept; the traces are not (size).
set -euo pipefail
BIN=$1 OUT=$2 PASSES=${PASSES:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
SIZES=1024,4096,16384,65536,262144,1048576,4194304,16777216,67108864
mkdir -p "$OUT/raw"
TRACES=$(mktemp -d); trap 'rm -rf "$TRACES"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
perf() {  # perf NAME PASS BACKEND BIND
  echo "$1 pass $2 start load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/raw/load.txt"
  mpirun -np 2 --bind-to "$4" "$BIN" --backend "$3" -a all --sizes "$SIZES" --no-membw -q \
    -o "$TRACES/$1_p$2.h5" --json "$OUT/raw/$1_p$2.json" > "$OUT/raw/$1_p$2.txt"
}
torch_peer() {  # torch_peer PASS
  echo "torch pass $1 start load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/raw/load.txt"
  PYTHONPATH="$HERE/../../python" /usr/bin/python3 -m scaleprobe_peers.gloo_torch 2 "$SIZES" "$OUT/raw/torch_p$1.jsonl"
}
for p in $(seq 1 "$PASSES"); do
  if [ $((p % 2)) = 1 ]; then
    perf unbound "$p" gloo none; perf mpi "$p" mpi none; torch_peer "$p"; perf bound "$p" gloo core
  else
    perf bound "$p" gloo core; torch_peer "$p"; perf mpi "$p" mpi none; perf unbound "$p" gloo none
  fi
done
echo "end load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/raw/load.txt"
