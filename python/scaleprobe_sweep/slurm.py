"""The SLURM commands the submitter runs, each with a timeout (a hung controller must not hang
a login-node shell), and the printed form of an sbatch line."""
from __future__ import annotations

import os
import re
import subprocess
from typing import List, Sequence, Set

from .errors import SweepError

SQUEUE_TIMEOUT_S = 30
SBATCH_TIMEOUT_S = 60
# Set by a job script for its own run: never let the caller's environment hand them to a job
# through --export=ALL (the submitter passes SCALEPROBE_PASS and SCALEPROBE_ARRAY_POINTS itself).
_JOB_OWNED = ("SCALEPROBE_POINT", "SCALEPROBE_PASS", "SCALEPROBE_ARRAY_POINTS", "SCALEPROBE_SIM_POINT")


def qline(argv: Sequence[str]) -> str:
    """The words as one shell line, exactly as the bash submitter printed them: plain words as
    they are, any other in single quotes (so every printed line can be pasted and run)."""
    out = []
    for a in argv:
        if re.fullmatch(r"[A-Za-z0-9_@%+=:,./-]+", a):
            out.append(a)
        else:
            out.append("'" + a.replace("'", "'\\''") + "'")
    return " ".join(out)


def queued_job_ids() -> Set[str]:
    """Ids of this user's jobs SLURM still lists as pending or running (array tasks as A_i)."""
    try:
        r = subprocess.run(["squeue", "-h", "-r", "--me", "-o", "%i"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, universal_newlines=True, timeout=SQUEUE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        raise SweepError("squeue failed: is the SLURM controller reachable (SLURM_CONF)?") from None
    if r.returncode != 0:
        raise SweepError("squeue failed: is the SLURM controller reachable (SLURM_CONF)?")
    return set(r.stdout.split())


def sbatch(argv: List[str]) -> str:
    """Runs sbatch ARGV (with --parsable among them); its messages go to the terminal. -> job id."""
    env = {k: v for k, v in os.environ.items() if k not in _JOB_OWNED}
    try:
        r = subprocess.run(["sbatch"] + argv, stdout=subprocess.PIPE, universal_newlines=True,
                           env=env, timeout=SBATCH_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise SweepError(f"sbatch did not answer within {SBATCH_TIMEOUT_S} s") from None
    except OSError as e:
        raise SweepError(f"sbatch could not run: {e}") from None
    if r.returncode != 0:
        raise SweepError("sbatch failed (see its message above)")
    out = r.stdout.strip()
    job = out.split(";", 1)[0]      # --parsable prints "id" or "id;cluster"
    if not re.fullmatch(r"[1-9][0-9]*", job):
        raise SweepError(f"sbatch printed '{out}', not a job id")
    return job
