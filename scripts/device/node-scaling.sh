#!/bin/bash
# Weak scaling of gpt-tiny (8 rows of 128 tokens per rank) and ResNet-20 (32 images per rank) at 1,
# N/2 and N ranks (N = nproc: 1, 8, 16 on the 16-core GPU node), each rank bound to one core with
# one thread: scaleprobe on Gloo and on MPI beside PyTorch DDP on gloo (workers pinned to the same
# CPUs), each against its own same-load no-communication run — the scaling rows of
# scripts/bench-peers (python/scaleprobe_peers/scaling.py runs them, here within a time budget).
#
# On the GPU node (repository root; the bundle made here by
#   ../shared/device/make-bundle.sh build/release   carried as .device):
#     scripts/device/node-scaling.sh
# Here, to try it (2 cores: ranks 1,2), with a bundle or with the build's programs:
#     OUT=/tmp/node-out SP_DEVICE=/path/to/.device scripts/device/node-scaling.sh
#     OUT=/tmp/node-out SP_BIN=build/release/bin scripts/device/node-scaling.sh
# Then, here:   scripts/bench-peers --from-node $OUT/node-scaling.tgz     (-> results/<date>-<node>-...)
#
# Writes into $OUT (what comes back): node-scaling.tgz (node-scaling/: node.txt = date, nproc,
# lscpu, MPI, PyTorch and the BLAS core; plan.json; runs.tsv = every run's status; raw/ = traces,
# DDP JSON lines and per-step rows, logs) and node-scaling.log (this script's output). Wall time:
# about SP_BUDGET_S (default 235) + 30 s; every run has its own timeout (SP_RUN_TIMEOUT_S, 90 s),
# none runs past the budget, and the driver as a whole is killed 30 s after it.
# Knobs: SP_RANKS (auto), SP_PASSES (2), SP_STEPS (5 summarised steps per run), SP_BUDGET_S,
# SP_PYTHON (python3: the one with torch), OPENBLAS_CORETYPE (else the programs' own choice, set
# for both sides); for tests: SP_MODELS (gpt,resnet) and SP_SIZES (e.g. "gpt=gpt-micro:2": another
# model and batch per rank).
set -uo pipefail
t0=$(date +%s)
OUT=${OUT:?"OUT: the folder whose files come back"}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/node-scaling.log") 2>&1
el() { echo "[t+$(( $(date +%s) - t0 ))s] $*"; }
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo" || exit 2
peer_ld=${LD_LIBRARY_PATH-}  # the PyTorch side runs without the bundle's libraries
if [ -z "${SP_BIN:-}" ]; then
  dev=${SP_DEVICE:-$repo/.device}
  [ -f "$dev/env.sh" ] || { el "error: no SP_BIN and no $dev/env.sh (make one with ../shared/device/make-bundle.sh)"; exit 2; }
  # shellcheck source=/dev/null
  source "$dev/env.sh" || { el "error: $dev/env.sh failed"; exit 2; }
fi
SP_BIN=$(cd "$SP_BIN" && pwd)
export SP_PEER_LD_LIBRARY_PATH=$peer_ld OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
PY=${SP_PYTHON:-python3}
budget=${SP_BUDGET_S:-235}
work=$(mktemp -d)/node-scaling
mkdir -p "$work/raw"
el "programs: $SP_BIN; work: $work"

torch_version=$(LD_LIBRARY_PATH=$peer_ld timeout 60 "$PY" -c 'import torch, sys; print(torch.__version__, "python", sys.version.split()[0])' 2>&1 | tail -1)
[[ "$torch_version" =~ ^[0-9] ]] || { el "error: $PY cannot import torch ($torch_version): set SP_PYTHON"; exit 2; }
{
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "hostname: $(hostname)"
  echo "nproc: $(nproc)"
  echo "kernel: $(uname -r)"
  echo "os: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
  echo "mpirun: $(command -v mpirun) $(mpirun --version 2>&1 | head -1)"
  echo "python: $(command -v "$PY") torch $torch_version"
  echo "memory: $(awk '/MemTotal/ {print $2, $3}' /proc/meminfo)"
} > "$work/node.txt"
cat "$work/node.txt"

# The trainers' BLAS core: where the bundle's OpenBLAS detects a generic core on this CPU the
# programs start again on the best one themselves (kernels/blas_core.hpp); that core is then set for
# every run here, so a PyTorch peer whose GEMMs go through the same OpenBLAS (Debian's torch) runs
# it too, as scripts/bench-peers does.
probe=$(timeout 60 mpirun -np 1 "$SP_BIN/gpt_train" -m gpt-micro -s 1 --val-batches 0 -o "$work/blas_probe.h5" 2>&1)
core=$(sed -n 's/.*core=\([A-Za-z0-9_]*\).*/\1/p' <<<"$probe" | head -1)
if [ -n "${OPENBLAS_CORETYPE:-}" ]; then
  choice="OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE set by the caller (core=$core)"
elif [ -n "$core" ] && grep -q "core=$core (chosen by scaleprobe" <<<"$probe"; then
  export OPENBLAS_CORETYPE=$core
  choice="OPENBLAS_CORETYPE=$core set here for both sides, the programs' choice ($(grep -o 'chosen by scaleprobe[^)]*' <<<"$probe" | head -1))"
else
  choice="the programs' own ($core)"
fi
rm -f "$work/blas_probe.h5"
echo "blas: $choice" >> "$work/node.txt"
el "blas: $choice"
{ echo "--- lscpu"; lscpu; } >> "$work/node.txt"

el "runs (budget ${budget} s)"
sizes=()
for s in ${SP_SIZES:-}; do sizes+=(--size "$s"); done
PYTHONPATH="$repo/python" timeout -k 10 $((budget + 30)) "$PY" -c \
  'import sys; from scaleprobe_peers.scaling import node_main; sys.exit(node_main())' \
  --bin-dir "$SP_BIN" --out "$work" --ranks "${SP_RANKS:-auto}" --passes "${SP_PASSES:-2}" \
  --steps "${SP_STEPS:-5}" --budget-s "$budget" --run-timeout-s "${SP_RUN_TIMEOUT_S:-90}" --python "$PY" \
  --models "${SP_MODELS:-gpt,resnet}" "${sizes[@]}"
rc=$?
el "driver exit $rc"

tar czf "$OUT/node-scaling.tgz" -C "$(dirname "$work")" node-scaling
size=$(stat -c %s "$OUT/node-scaling.tgz")
el "$OUT/node-scaling.tgz: $size bytes$( [ "$size" -gt 16000000 ] && echo ' — OVER the 16 MiB a file may bring back')"
rm -rf "$(dirname "$work")"
exit $rc
