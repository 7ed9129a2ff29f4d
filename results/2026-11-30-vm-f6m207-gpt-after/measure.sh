#!/bin/bash
# Issue 28: gpt-tiny (batch 8, one rank) from the build before this session's kernels (base,
# ff8d9a1) and the session's last (new: ../2026-11-30-vm-f6m207-gpt-passes's new, then the clip's
# factor applied by AdamW, GELU's backward in place and one block's activation gradients reused by
# every block), interleaved with the PyTorch peer: per pass and thread count (1, 2) each build's
# gpt_train (12 steps, --profile-kernels; the order rotated every pass), then the peer with its
# OpenBLAS on the core the trainer chose.
#   bash measure.sh BASE_BUILD NEW_BUILD PASSES > measure.log
set -u
base=$1; new=$2; passes=${3:-9}
here=$(cd "$(dirname "$0")" && pwd); src=$(cd "$here/../.." && pwd)
out=$here/raw; mkdir -p "$out"
# shellcheck source=../lib/base_new.sh
source "$here/../lib/base_new.sh"
base_new_passes gpt "$passes" "$out" "$src" "base=$base" "new=$new"
echo "# end $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)"
