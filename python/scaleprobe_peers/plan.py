"""What scripts/bench-peers compares, as data: one profile per speed/thoroughness trade-off.

Every comparison is scaleprobe against the peer a user would otherwise reach for, measured in the
same session, alternating which side runs first from pass to pass (A B, B A, A B, ...):
- ``allreduce``: each of scaleprobe's allreduce algorithms against the MPI library's
  MPI_Allreduce, both timed in the same allreduce_perf run (2 ranks);
- ``gpt`` / ``resnet``: the trainer against the same model in PyTorch, from the same initial
  weights, at each thread count (torch_peer.py);
- ``ddp``: data-parallel gpt_train against PyTorch DDP (gloo) at each bucket cap, 2 ranks;
- ``weak`` / ``strong``: scaling efficiency of the same cap from 1 to 2 ranks, scaleprobe's
  against PyTorch DDP's (weak: the batch per rank fixed; strong: the global batch fixed);
- ``gloo``: on the Gloo backend (allreduce_perf --backend gloo), Gloo's own allreduce and each of
  scaleprobe's schedules against MPI_Allreduce in the same run, and Gloo's allreduce as timed by
  allreduce_perf against PyTorch's (torch.distributed gloo), 2 ranks, unbound (bound to one core
  per rank Gloo's own allreduce took a fixed 4 ms here, results/2026-11-25-vm-f25m17-gloo-vs-mpi:
  Gloo's event loop spinning on the rank's core, which PyTorch's side still pays bound; scaleprobe
  runs the loop at idle priority since 8d6fb8b);
- ``isa`` (only when asked, with --native-build-dir): the portable build's trainers against a
  native build's, same model, weights and threads (the gpt and resnet settings, most threads);
- ``scaling``: weak scaling of gpt-tiny and ResNet-20 at each rank count (``auto``: 1, N/2 when
  N >= 4, and N, the CPUs the machine has), scaleprobe on Gloo and on MPI against PyTorch DDP
  on gloo, each side's step divided by its own same-load no-communication step (scaling.py);
  its ``passes`` is at most the profile's (--quick: 2, A B / B A, to stay near 3 minutes; --full: 3).
The time metric of a side is a median (of steps, or of calls for allreduce: its t_mean_us),
never the best pass, and every pass is stored.
"""
from __future__ import annotations

from .scaling import MODELS

PROFILES = {
    # --quick: about 3 minutes on a quiet 2-core machine (a check, not a result to store)
    "quick": {
        "passes": 3,
        "allreduce": {"ranks": 2, "sizes": "8,64K,1M", "iters": 200},
        "gloo": {"ranks": 2, "sizes": "1024,1048576"},
        "gpt": {"model": "gpt-tiny", "batch": 8, "steps": 10, "threads": [1]},
        "resnet": {"model": "resnet20", "batch": 32, "steps": 10, "threads": [1]},
        "ddp": {"model": "gpt-tiny", "batch": 8, "steps": 5, "caps": "1,25", "ranks": 2},
        "strong": None,
        "scaling": {"passes": 2, "ranks": "auto", "steps": 3, "cap": "25", "models": MODELS},
    },
    # --full: about 12 minutes on a 2-core machine
    "full": {
        "passes": 5,
        "allreduce": {"ranks": 2, "sizes": "8,1K,64K,1M,16M,64M", "iters": 0},
        "gloo": {"ranks": 2, "sizes": "1024,65536,1048576,16777216"},
        "gpt": {"model": "gpt-tiny", "batch": 8, "steps": 16, "threads": [1, 2]},
        "resnet": {"model": "resnet20", "batch": 32, "steps": 16, "threads": [1, 2]},
        "ddp": {"model": "gpt-tiny", "batch": 8, "steps": 8, "caps": "1,5,25,100", "ranks": 2},
        "strong": {"model": "gpt-tiny", "global_batch": 16, "steps": 8, "cap": "25", "ranks": 2},
        "scaling": {"passes": 3, "ranks": "auto", "steps": 8, "cap": "25", "models": MODELS},
    },
}
