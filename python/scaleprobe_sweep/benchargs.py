"""Benchmark arguments the job owns, refused before anything is submitted and again in every job
(job.py, for jobs submitted with a plain sbatch), so a bad sweep fails at once instead of in every
job. A scan of the words, not a parse: the binaries' own parsers (CLI11) judge everything else.
"""
from __future__ import annotations

from typing import Optional, Sequence

from .settings import TRAINERS


def problem(bench: str, args: Sequence[str]) -> Optional[str]:
    """The first refused argument's problem, or None."""
    for a in args:
        if a.startswith("-o") or a == "--trace" or a.startswith("--trace="):   # -o, -oFILE
            return f"do not pass {a}: the job script names the trace"
        if a == "--scaling" or a.startswith("--scaling="):
            return f"do not pass {a}: the sweep's scaling decides (submit-sweep --scaling, SCALEPROBE_SCALING)"
        if a == "--backend" or a.startswith("--backend="):
            return f"do not pass {a}: the sweep's backend decides (submit-sweep --backend, SCALEPROBE_BACKEND)"
        if a == "--global-batch" or a.startswith("--global-batch="):
            return (f"do not pass {a}: -B N is the global batch under strong scaling and the per-rank "
                    "batch under weak scaling (submit-sweep --scaling, SCALEPROBE_SCALING)")
        if bench in TRAINERS and a.split("=", 1)[0] in ("--save", "--resume", "--init-from"):
            return f"do not pass {a}: the job script manages the checkpoint"
    return None
