"""Trainer jobs and time limits. The checkpoint of a point lives at
<campaign>/checkpoints/<stem>.h5 (the point's name plus _p<k> for pass k >= 2, so every pass trains
from scratch); a job that finds it resumes from it, so a resubmitted or requeued job continues.

Submit with --signal=B:USR1@<seconds>: the batch shell (this process) gets USR1 before the time
limit and forwards it to the ranks; the trainer finishes its step, checkpoints and exits 0 with a
trace whose interrupted_by_signal is set. That trace is kept as a segment and the job requeues
itself when SCALEPROBE_REQUEUE=1 (submit with --requeue). SIGTERM is forwarded the same way.
"""
from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any, Callable, Dict, List

from .errors import JobError


def run_trainer(cmd: List[str], campaign_dir: Path, stem: str, trace: Path, log: Callable[[str], None]) -> int:
    """Runs the trainer with its checkpoint; signals are forwarded until it exits."""
    checkpoint = campaign_dir / "checkpoints" / f"{stem}.h5"
    checkpoint.parent.mkdir(parents=True, exist_ok=True)
    ck = ["--save", str(checkpoint)]
    if checkpoint.is_file():
        ck += ["--resume", str(checkpoint)]
        log(f"resuming from {checkpoint}")
    proc = subprocess.Popen(cmd + ck + ["-o", str(trace)])

    def forward(signum: int, _frame: Any) -> None:
        log(f"{signal.Signals(signum).name[3:]}: asking the trainer to checkpoint and stop")
        try:
            proc.send_signal(signum)
        except ProcessLookupError:
            pass
    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGUSR1, signal.SIGTERM)}
    try:
        return proc.wait()      # a handled signal does not end the wait (PEP 475)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def trainer_interrupted(trace: Path, campaign_dir: Path, stem: str, env: Dict[str, str],
                        log: Callable[[str], None]) -> None:
    """The trainer stopped early with a checkpoint: keep its trace as a segment (so a resume still
    sees the point as unfinished) and requeue the job, or say how to continue."""
    segments = campaign_dir / "segments"
    segments.mkdir(parents=True, exist_ok=True)
    segment = segments / f"{trace.stem}_r{env.get('SLURM_RESTART_COUNT') or 0}.h5"
    os.replace(trace, segment)
    log(f"INTERRUPTED: checkpoint {campaign_dir / 'checkpoints' / (stem + '.h5')}, trace segment {segment}")
    if env.get("SCALEPROBE_REQUEUE", "0") == "1":
        job = env.get("SLURM_JOB_ID", "")
        log(f"requeueing job {job} to continue from the checkpoint")
        if subprocess.run(["scontrol", "requeue", job]).returncode != 0:
            raise JobError(1, f"scontrol requeue {job} failed (submit with --requeue)")
    else:
        log("submit the same job again to continue from the checkpoint (or set SCALEPROBE_REQUEUE=1 and "
            "sbatch --requeue)")
