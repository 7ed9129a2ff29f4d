"""bucket_sweep packs gradients exactly as PyTorch DDP does.

DDP (torch 1.13, after its first-iteration bucket rebuild) assigns buckets over the parameters in
gradient-ready order, i.e. reversed, with limits [1 MiB, bucket_cap]. We run the real binary with
--print-buckets and compare its assignment, tensor by tensor, with torch's own
_compute_bucket_assignment_by_size on the layout the trace recorded.
"""
from __future__ import annotations

import re
import subprocess

import h5py

import optional_parts
from helpers import build_dir, mpi_env, need_binary

torch = optional_parts.importorskip("torch", "torch")
dist = optional_parts.importorskip("torch.distributed", "torch")

CAPS_MIB = ["1", "5", "25", "100"]


def run_bucket_sweep(tmp_path, layout: str):
    exe = build_dir() / "collectives" / "bucket_sweep"
    need_binary(exe)
    trace = tmp_path / "buckets.h5"
    proc = subprocess.run([str(exe), "--layout", layout, "-c", ",".join(CAPS_MIB), "-a", "mpi", "-n", "1", "-w", "0",
                           "-q", "--print-buckets", "-o", str(trace)],
                          env=mpi_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    ours: dict[str, list[list[int]]] = {}
    for m in re.finditer(r"^# bucket cap=(\S+) (\d+): bytes=\d+ tensors=([\d,]+)$", proc.stdout, re.M):
        ours.setdefault(m.group(1), []).append([int(x) for x in m.group(3).split(",")])
    with h5py.File(trace) as f:
        numels = [int(n) for n in f["layout/numel"][:]]
    return ours, numels


def torch_assignment(numels: list[int], cap_mib: str) -> list[list[int]]:
    n = len(numels)
    reversed_params = [torch.empty(numels[i]) for i in reversed(range(n))]
    limits = [dist._DEFAULT_FIRST_BUCKET_BYTES, int(float(cap_mib) * 2**20)]
    buckets, _ = dist._compute_bucket_assignment_by_size(reversed_params, limits, [False] * n)
    return [[n - 1 - i for i in bucket] for bucket in buckets]  # back to forward indices


def test_resnet50_buckets_match_torch_ddp(tmp_path):
    ours, numels = run_bucket_sweep(tmp_path, "resnet50")
    assert sum(numels) == 25_557_032
    assert set(ours) == set(CAPS_MIB)
    for cap in CAPS_MIB:
        assert ours[cap] == torch_assignment(numels, cap), f"cap {cap} MiB differs from torch DDP"
