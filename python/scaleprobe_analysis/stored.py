"""Readers the stored campaigns' summarize scripts share (results/*/summarize.py).

Each reads what one script already read from a trace, through ``open_h5``, and returns plain
values (numpy scalars where the table holds them), so that a script prints the same tables as it
did with its own copy: an HDF5 string as text, a step_replay trace's ``cases``, a profiled
trainer's kernels per step, a data-parallel run's step and phase times, a pipeline run's stages.
"""
from __future__ import annotations

import glob
import re
import statistics
from pathlib import Path

import numpy as np

from .h5open import open_h5


def text(value) -> str:
    """An HDF5 string (bytes or str, as h5py gives it) as str."""
    return value.decode() if isinstance(value, bytes) else str(value)


def _natural(path: str) -> list:
    """A sort key that orders the numbers in a path by value (scale-16 < scale-64 < scale-256)."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path)]


def replay_cases(path) -> tuple[str, int, list[dict]]:
    """A step_replay trace's overlap mode, rank count and ``cases`` rows (column -> value)."""
    with open_h5(path) as f:
        c = f["cases"]
        mode = text(f.attrs["overlap_mode"])
        ranks = int(f.attrs["nranks"])
        return mode, ranks, [{k: c[k][i] for k in c.keys()} for i in range(len(c["case"]))]


def replayed(pattern: str) -> list[tuple[str, str, int, list[dict]]]:
    """Every step_replay trace matching pattern (``sim/like-*.h5``, ``sim/scale-*.h5``), numbers in
    the names in order of value: its name (the file's stem after the first '-': like-gpt2-none-p1
    -> gpt2-none-p1), then ``replay_cases``."""
    found = []
    for path in sorted(glob.glob(pattern), key=_natural):
        found.append((Path(path).stem.split("-", 1)[1], *replay_cases(path)))
    return found


def errors_by_trace(traces) -> dict[str, list[float]]:
    """Every case's ``error`` of ``replayed``'s traces, grouped by the trace without its pass
    (gpt2-none-p1 -> gpt2-none), in the traces' order."""
    errors = {}
    for name, _, _, cases in traces:
        errors.setdefault(name.rsplit("-p", 1)[0], []).extend(float(c["error"]) for c in cases)
    return errors


def kernel_ms_per_step(f) -> dict[str, float]:
    """ms per step of the whole step ("(step)", first) and of every kernel in an open trainer
    trace's ``kernels`` table (``--profile-kernels``)."""
    k = f["kernels"]
    ms = {"(step)": float(k["step_wall_s"][0]) / int(k["steps"][0]) * 1e3}
    for i, name in enumerate(k["kernel"][()]):
        ms[text(name)] = float(k["seconds"][i]) / int(k["steps"][i]) * 1e3
    return ms


def kernel_rows(a: dict[str, list[float]], b: dict[str, list[float]], share: float = 0.01) -> list[str]:
    """Markdown rows ``| kernel | a | b | b / a |`` of two runs' ms per step (kernel -> one value
    per pass, "(step)" among them; medians): the step and every kernel in both that takes at least
    ``share`` of a's step, slowest in a first."""
    med = statistics.median
    step = med(a["(step)"])
    return [f"| {name} | {med(a[name]):.2f} | {med(b[name]):.2f} | {med(b[name]) / med(a[name]):.3f} |"
            for name in sorted(a, key=lambda n: -med(a[n]))
            if name in b and (med(a[name]) >= share * step or name == "(step)")]


def ddp_step(f, phases) -> dict[str, float]:
    """A data-parallel train trace's times in ms: ``step_ms``, the slowest rank's median step
    (``cases.iteration_median_s``); ``<phase>_ms`` for each phase, its mean over ranks and summarised
    steps (``iterations.<phase>_s``); ``exposed_ms`` (``cases.exposed_comm_mean_s``); and
    ``final_loss``."""
    it = f["iterations"]
    keep = it["in_summary"][()] == 1
    numbers = {"step_ms": float(f["cases"]["iteration_median_s"][0]) * 1e3}
    numbers.update({f"{phase}_ms": float(np.mean(it[f"{phase}_s"][()][keep])) * 1e3 for phase in phases})
    numbers["exposed_ms"] = float(f["cases"]["exposed_comm_mean_s"][0]) * 1e3
    numbers["final_loss"] = float(f.attrs["final_loss"])
    return numbers


def variant_runs(raw: str, variants, numbers) -> tuple[dict[tuple[str, int, str], dict], set[str]]:
    """Every trace ``raw/MODEL-VARIANT-pPASS.h5`` (VARIANT one of variants) read by ``numbers(f)``:
    {(model, pass, variant): its numbers}, and the CPU signatures of the traces."""
    rows, cpu = {}, set()
    name = re.compile(rf"(\w+)-({'|'.join(variants)})-p(\d+)\.h5$")
    for path in sorted(glob.glob(f"{raw}/*-p*.h5")):
        model, variant, p = name.search(path).groups()
        with open_h5(path) as f:
            cpu.add(text(f["provenance"].attrs["cpu_signature"]))
            rows[(model, int(p), variant)] = numbers(f)
    return rows, cpu


def pipeline_stages(path, stages: int) -> tuple[float, list[float], list[float]]:
    """A pipeline gpt_train trace's median step in s (``cases.iteration_median_s``) and, per stage
    (rank) below ``stages``, over the steps after the first: the median bubble (``pipeline``) and
    the time blocked receiving per step in s (``pipeline_ops.recv_s`` summed)."""
    with open_h5(path) as f:
        step = float(f["cases"]["iteration_median_s"][0])
        p = {k: f["pipeline"][k][()] for k in ("rank", "step", "bubble")}
        o = {k: f["pipeline_ops"][k][()] for k in ("rank", "step", "recv_s")}
    first = int(np.min(o["step"])) + 1  # the first step is left out, as the run's summary does
    bubbles, recv = [], []
    for stage in range(stages):
        keep = (p["rank"] == stage) & (p["step"] >= first)
        bubbles.append(float(np.median(p["bubble"][keep])))
        ops = (o["rank"] == stage) & (o["step"] >= first)
        recv.append(float(np.sum(o["recv_s"][ops])) / len(set(o["step"][ops].tolist())))
    return step, bubbles, recv
