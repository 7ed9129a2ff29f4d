"""Per-iteration views of the ``samples`` table (schema: docs/trace-schema.md), for any kind.

Each kind module says which rows time one case iteration (``allreduce``: the ``allreduce``
phase; ``bucket_sweep``: the whole ``iteration``; trainers: each rank's compute per step from
``iterations``) and hands them over as a frame with columns rank, case, iteration, wall_us
(and cpu_us). The reductions here work on such a frame the way the binaries' summaries do:

- :func:`per_iteration_max`: per case and iteration, the slowest rank's time (the rank that
  finishes last decides when the collective is done); this is what ``p50_us``/``p99_us`` of
  the summary are percentiles of.
- :func:`rank_means`: per case and rank, the rank's mean time, against the mean over ranks.

Durations only: ``start_s`` is on each rank's own clock and is never compared across ranks.
"""
from __future__ import annotations

import pandas as pd

from .trace import Trace, TraceError


def phase_id(trace: Trace, name: str) -> int:
    """Row of ``phases`` named ``name``; a missing phase is a :class:`TraceError`."""
    phases = list(trace.table("phases")["name"])
    if name not in phases:
        raise TraceError(trace.path, f"phase '{name}' missing from the 'phases' table")
    return phases.index(name)


def phase_samples(trace: Trace, name: str) -> pd.DataFrame:
    """Samples of phase ``name``: columns rank, case, iteration, wall_us, cpu_us."""
    s = trace.table("samples")
    s = s[s["phase"] == phase_id(trace, name)]
    return pd.DataFrame({"rank": s["rank"], "case": s["case"], "iteration": s["iteration"],
                         "wall_us": s["wall_s"] * 1e6, "cpu_us": s["cpu_s"] * 1e6}).reset_index(drop=True)


def per_iteration_max(samples: pd.DataFrame) -> pd.DataFrame:
    """Per (case, iteration) the slowest rank's wall time in µs: columns case, iteration, wall_us."""
    return samples.groupby(["case", "iteration"], as_index=False)["wall_us"].max()


def rank_means(samples: pd.DataFrame) -> pd.DataFrame:
    """Per (case, rank): ``rank_mean_us``, the case's ``mean_us`` over ranks and their ratio.

    ``rel`` = rank_mean_us / mean_us − 1 (0 for a perfectly balanced case).
    """
    out = samples.groupby(["case", "rank"], as_index=False)["wall_us"].mean().rename(columns={"wall_us": "rank_mean_us"})
    out["mean_us"] = out.groupby("case")["rank_mean_us"].transform("mean")
    out["rel"] = out["rank_mean_us"] / out["mean_us"] - 1.0
    return out


def phase_views(name: str):
    """(rank_times, iteration_times) of a kind whose case is timed by phase ``name`` (allreduce, bucket_sweep)."""
    def rank_times(trace: Trace) -> pd.DataFrame:
        return phase_samples(trace, name)

    def iteration_times(trace: Trace) -> pd.DataFrame:
        return per_iteration_max(phase_samples(trace, name))
    return rank_times, iteration_times
