#!/usr/bin/env bash
# The full test suite: install what is missing, build (release preset), run every CTest group
# (unit, mpi at 1-8 ranks, python analysis; slurm when present). Extra arguments go to ctest,
# e.g. `scripts/test.sh -L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
ctest --preset release "$@"
