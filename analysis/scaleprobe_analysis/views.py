"""Derived views of summary tables shared by the fits, plots and report.

A *series* is what one curve on a plot shows: the rows of one algorithm, split further by
dtype, op, placement or sync only where the trace actually varies them (so a plain sweep
has series named just ``ring``, ``mpi``, ...).
"""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

VARIANT_COLUMNS = ("dtype", "op", "placement", "sync")


def series_columns(summary: pd.DataFrame) -> list[str]:
    """``algorithm`` plus every variant column that takes more than one value."""
    return ["algorithm"] + [c for c in VARIANT_COLUMNS if c in summary and summary[c].nunique() > 1]


def series(summary: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    """(label, rows sorted by bytes) per series, in order of first appearance."""
    keys = series_columns(summary)
    for key, part in summary.groupby(keys if len(keys) > 1 else keys[0], sort=False):
        key = key if isinstance(key, tuple) else (key,)
        yield " ".join(str(k) for k in key), part.sort_values("bytes")


def series_labels(summary: pd.DataFrame) -> pd.Series:
    """The series label of every row of ``summary``."""
    keys = series_columns(summary)
    return summary[keys].astype(str).agg(" ".join, axis=1)


def cap_order(summary: pd.DataFrame) -> list[str]:
    """Bucket caps from smallest to largest (``tensor`` first, ``all`` last).

    bucket_sweep stores ``tensor`` as cap_bytes 0 and ``all`` as the int64 maximum, so
    sorting by cap_bytes gives the natural order.
    """
    caps = summary[["cap", "cap_bytes"]].drop_duplicates("cap").sort_values("cap_bytes", kind="stable")
    return list(caps["cap"])


def best_caps(summary: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm, the bucket_sweep row with the lowest mean iteration time."""
    best = summary.loc[summary.groupby("algorithm", sort=False)["t_mean_us"].idxmin()]
    return best[["algorithm", "cap", "buckets", "t_mean_us", "p50_us", "p99_us", "busbw_GBps"]]


def contention(summary: pd.DataFrame, kind: str) -> pd.DataFrame:
    """cpu/wall ratio per case: the timing thread's CPU time over its wall time.

    Close to 1 the thread was busy all along (typical of shared-memory MPI that polls);
    well below 1 it was blocked or runnable on a busy core: on a shared or oversubscribed
    machine that is the sign of contention. For sub-µs calls the ratio can exceed 1 because
    the CPU clock is read outside the wall interval (see core/timer.hpp).
    """
    out = pd.DataFrame({"case": summary["case"], "series": series_labels(summary)})
    if kind == "bucket_sweep":
        out["cap"] = summary["cap"]
    else:
        out["bytes"] = summary["bytes"]
    out["t_mean_us"] = summary["t_mean_us"]
    out["cpu_mean_us"] = summary["cpu_mean_us"]
    out["cpu_wall"] = summary["cpu_mean_us"] / summary["t_mean_us"]
    if "runqueue_wait_us" in summary:
        wait = summary["runqueue_wait_us"].where(summary["runqueue_wait_us"] >= 0, np.nan)
        out["runqueue_wait_us"] = wait
    return out.reset_index(drop=True)
