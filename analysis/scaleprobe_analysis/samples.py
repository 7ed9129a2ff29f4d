"""Per-iteration views of the ``samples`` table (schema: docs/trace-schema.md).

Every summary row (a *case*) is timed by one phase: ``allreduce`` in allreduce traces and
``iteration`` (the whole backward-order allreduce of every bucket) in bucket_sweep traces.
The helpers here select that phase and reduce the per-rank rows the way the summary does:

- :func:`per_iteration_max`: per case and iteration, the slowest rank's time (the rank that
  finishes last decides when the collective is done); this is what ``p50_us``/``p99_us`` of
  the summary are percentiles of.
- :func:`rank_means`: per case and rank, the rank's mean time, against the mean over ranks.

Trainer traces (kind ``train``) have no single per-case phase: their per-step unit is the
``iterations`` table, and what is compared across ranks is each rank's **compute** per step
(``compute_s`` = forward + backward + optimizer, summarised steps only), since the other
phases (wait, averaging) absorb the imbalance rather than cause it.

Durations only: ``start_s`` is on each rank's own clock and is never compared across ranks.
"""
from __future__ import annotations

import pandas as pd

from .trace import Trace, TraceError

CASE_PHASE = {"allreduce": "allreduce", "bucket_sweep": "iteration"}
PER_RANK_KINDS = (*CASE_PHASE, "train")  # kinds :func:`case_samples` (and so the imbalance views) handle


def case_phase_id(trace: Trace) -> int:
    """Row of ``phases`` whose samples time a whole case iteration."""
    name = CASE_PHASE.get(trace.kind)
    if name is None:
        raise TraceError(trace.path, f"no per-iteration phase known for kind '{trace.kind}'")
    phases = list(trace.table("phases")["name"])
    if name not in phases:
        raise TraceError(trace.path, f"phase '{name}' missing from the 'phases' table")
    return phases.index(name)


def case_samples(trace: Trace) -> pd.DataFrame:
    """Samples of the per-case phase: columns rank, case, iteration, wall_us, cpu_us.

    For kind ``train``: per rank and summarised step the compute time (``iterations.compute_s``;
    ``iteration`` is the step, ``cpu_us`` NaN since the trace has no compute-only CPU time).
    """
    if trace.kind == "train":
        it = trace.table("iterations")
        it = it[it["in_summary"] == 1]
        return pd.DataFrame({"rank": it["rank"], "case": it["case"], "iteration": it["step"],
                             "wall_us": it["compute_s"] * 1e6, "cpu_us": float("nan")}).reset_index(drop=True)
    s = trace.table("samples")
    s = s[s["phase"] == case_phase_id(trace)]
    return pd.DataFrame({"rank": s["rank"], "case": s["case"], "iteration": s["iteration"],
                         "wall_us": s["wall_s"] * 1e6, "cpu_us": s["cpu_s"] * 1e6}).reset_index(drop=True)


def per_iteration_max(trace: Trace) -> pd.DataFrame:
    """Per (case, iteration) the slowest rank's wall time in µs: columns case, iteration, wall_us."""
    s = case_samples(trace)
    return s.groupby(["case", "iteration"], as_index=False)["wall_us"].max()


def rank_means(trace: Trace) -> pd.DataFrame:
    """Per (case, rank): ``rank_mean_us``, the case's ``mean_us`` over ranks and their ratio.

    ``rel`` = rank_mean_us / mean_us − 1 (0 for a perfectly balanced case).
    """
    s = case_samples(trace)
    out = s.groupby(["case", "rank"], as_index=False)["wall_us"].mean().rename(columns={"wall_us": "rank_mean_us"})
    out["mean_us"] = out.groupby("case")["rank_mean_us"].transform("mean")
    out["rel"] = out["rank_mean_us"] / out["mean_us"] - 1.0
    return out
