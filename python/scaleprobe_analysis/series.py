"""Series of a ``summary`` table (allreduce and bucket_sweep): what one curve on a plot shows.

A *series* is the rows of one algorithm, split further by dtype, op, placement or sync only
where the trace actually varies them (so a plain sweep has series named just ``ring``, ``mpi``,
...). The α–β fit, the figures and the tables of both collective kinds group rows this way; the
timing thread's CPU/wall indicator (table and figure) is shared by both kinds as well.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from . import style
from .trace import Trace

VARIANT_COLUMNS = ("dtype", "op", "placement", "sync")

# The per-rank imbalance figure's note for both collective kinds (the registry's IMBALANCE_NOTE).
COLLECTIVE_IMBALANCE_NOTE = ("a rank that arrives late at a collective waits least: a long time often means its "
                             "peers were late")


def series_columns(summary: pd.DataFrame) -> list[str]:
    """``algorithm`` plus every variant column that takes more than one value."""
    return ["algorithm"] + [c for c in VARIANT_COLUMNS if c in summary and summary[c].nunique() > 1]


def series(summary: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    """(label, rows sorted by bytes) per series, in order of first appearance."""
    keys = series_columns(summary)
    for key, part in summary.groupby(keys if len(keys) > 1 else keys[0], sort=False):
        key = key if isinstance(key, tuple) else (key,)
        yield " ".join(str(k) for k in key), part.sort_values("bytes")


def series_labels(summary: pd.DataFrame, keys: list[str] | None = None) -> pd.Series:
    """The series label of every row of ``summary`` (``keys``: the columns, default :func:`series_columns`)."""
    keys = keys or series_columns(summary)
    return summary[keys].astype(str).agg(" ".join, axis=1)


def timing_contention(summary: pd.DataFrame, x_column: str) -> pd.DataFrame:
    """cpu/wall ratio per case: the timing thread's CPU time over its wall time.

    Close to 1 the thread was busy all along (typical of shared-memory MPI that polls);
    well below 1 it was blocked or runnable on a busy core: on a shared or oversubscribed
    machine that is the sign of contention. For sub-µs calls the ratio can exceed 1 because
    the CPU clock is read outside the wall interval (see core/measure/timer.hpp). ``x_column`` is the
    column the case varies along (``bytes`` or ``cap``).
    """
    out = pd.DataFrame({"case": summary["case"], "series": series_labels(summary), x_column: summary[x_column]})
    out["t_mean_us"] = summary["t_mean_us"]
    out["cpu_mean_us"] = summary["cpu_mean_us"]
    out["cpu_wall"] = summary["cpu_mean_us"] / summary["t_mean_us"]
    if "runqueue_wait_us" in summary:
        out["runqueue_wait_us"] = summary["runqueue_wait_us"].where(summary["runqueue_wait_us"] >= 0, np.nan)
    return out.reset_index(drop=True)


@style.styled
def timing_contention_figure(trace: Trace, x_column: str, x_of: Callable[[pd.Series], pd.Series],
                             x_axis: Callable) -> Figure:
    """:func:`timing_contention` per series against ``x_of(x_column values)``; ``x_axis(ax)`` labels the x axis."""
    table = timing_contention(trace.table("summary"), x_column)
    fig, (ax,) = style.new_figure("Timing-thread CPU / wall", style.trace_caption(
        trace, "below 1: the thread waited (blocked, or runnable on a busy core); above 1: reading the CPU clock "
               f"(sub-µs calls); load {trace.provenance.get('load_average_start', '?')} at start"),
        simulated=trace.simulated)
    for k, (label, part) in enumerate(table.groupby("series", sort=False)):
        ax.plot(x_of(part[x_column]), part["cpu_wall"], "o-", color=style.colour(k), label=label)
    x_axis(ax)
    ax.axhline(1.0, color="black", lw=0.8, ls=":")
    style.finish_from_zero(ax, "CPU time / wall time (ratio)")
    return fig
