#!/usr/bin/env bash
# CTest gpt_torch_load: a gpt_train checkpoint loads into the PyTorch GPT (python -m
# scaleprobe_peers.gpt_checkpoint) and gives the logits the C++ model dumped (max difference within
# 1e-4 relative), with the tied and the --untied-head LM head, and a checkpoint with one tensor
# altered is rejected. Without torch/h5py: exit 77 (Not Run), or in CI a
# failure unless torch is optional there (tests/optional-parts.txt).
# Usage: gpt_torch_load.sh <path to gpt_train>
set -u
G=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
load() { PYTHONPATH="$root/python" /usr/bin/python3 -m scaleprobe_peers.gpt_checkpoint "$@"; }
# shellcheck source=../lib/optional_part.sh
source "$root/tests/lib/optional_part.sh"
/usr/bin/python3 -c 'import torch, h5py' 2>/dev/null || sp_skip_optional_part torch "torch or h5py missing"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$G" -m gpt-micro -B 4 -s 10 --synthetic-bytes 50000 -q -o "$tmp/t.h5" --save "$tmp/ck.h5" >/dev/null || exit 1
load "$tmp/ck.h5" || exit 1
# --untied-head: lm_head.weight loads into the PyTorch module's own head and gives the same logits.
"$G" -m gpt-micro -B 4 -s 4 --synthetic-bytes 50000 -q --untied-head -o "$tmp/u.h5" --save "$tmp/u_ck.h5" >/dev/null || exit 1
load "$tmp/u_ck.h5" || exit 1
# One tensor altered: with the digest re-stamped (as if written so) the logits check rejects it;
# without, the digest does, before the tensors are read.
cp "$tmp/ck.h5" "$tmp/bad.h5"
PYTHONPATH="$root/python" /usr/bin/python3 -c 'import h5py, sys
from scaleprobe_analysis import digest
with h5py.File(sys.argv[1], "r+") as f:
    d = f["model/transformer.h.1.mlp.c_fc.weight"]; d[0, :] = d[0, :] * 1.5
digest.restamp(sys.argv[1])' "$tmp/bad.h5" || exit 1
if load "$tmp/bad.h5" 2>"$tmp/err"; then
  echo "FAIL: an altered checkpoint passed the logits check"; exit 1
fi
grep -q "logits differ" "$tmp/err" || { echo "FAIL: not refused by the logits check: $(cat "$tmp/err")"; exit 1; }
cp "$tmp/ck.h5" "$tmp/flipped.h5"
/usr/bin/python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(4000); b = f.read(1); f.seek(4000); f.write(bytes([b[0] ^ 1]))' "$tmp/flipped.h5" || exit 1
if load "$tmp/flipped.h5" 2>"$tmp/err"; then
  echo "FAIL: a checkpoint with a flipped byte loaded"; exit 1
fi
grep -q "corrupt: whole-file crc32" "$tmp/err" || { echo "FAIL: not refused by the digest: $(cat "$tmp/err")"; exit 1; }
echo "gpt_torch_load: ok, tied and untied heads (an altered checkpoint fails the logits check, a flipped byte the digest)"
