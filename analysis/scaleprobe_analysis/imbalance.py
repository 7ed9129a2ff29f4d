"""Per-rank imbalance: each rank's mean time per case against the mean over ranks.

For every case (summary row) the per-iteration samples of that case's phase are averaged
per rank (see :func:`samples.rank_means`). ``imbalance_pct`` is how much the slowest rank
(largest mean) exceeds the mean over ranks. Read it with care: in a collective the rank
that *arrives last* waits least, so a long time on one rank often means the others were
late (skewed arrival, a descheduled peer), not that this rank's work was slower.

Trainer traces compare each rank's *compute* per step (forward + backward + optimizer, from
``iterations``), which has no such waiting in it: there a high value is a slow rank (an
oversubscribed core, a noisy neighbour) or uneven work.
"""
from __future__ import annotations

import pandas as pd

from .samples import rank_means
from .textfmt import format_bytes
from .trace import Trace
from .train import case_label
from .views import series_labels


def case_labels(trace: Trace) -> pd.Series:
    """Short label per case, indexed by case: 'ring 1M' (allreduce), 'ring cap 5' (bucket_sweep, train)."""
    if trace.kind == "train":
        cases = trace.table("cases")
        return pd.Series([case_label(a, c) for a, c in zip(cases["algorithm"], cases["bucket_cap"])],
                         index=cases["case"])
    summary = trace.table("summary")
    series = series_labels(summary)
    if trace.kind == "bucket_sweep":
        labels = series + " cap " + summary["cap"].astype(str)
    else:
        labels = series + " " + summary["bytes"].map(format_bytes)
    return pd.Series(list(labels), index=summary["case"])


def imbalance_table(trace: Trace) -> pd.DataFrame:
    """One row per case: mean over ranks, slowest and fastest rank and the imbalance in %."""
    means = rank_means(trace)
    labels = case_labels(trace)
    rows = []
    for case, part in means.groupby("case", sort=True):
        slow = part.loc[part["rank_mean_us"].idxmax()]
        fast = part.loc[part["rank_mean_us"].idxmin()]
        rows.append({"case": int(case), "label": labels.get(case, str(case)),
                     "mean_us": float(slow["mean_us"]), "slowest_rank": int(slow["rank"]),
                     "slowest_us": float(slow["rank_mean_us"]), "fastest_rank": int(fast["rank"]),
                     "fastest_us": float(fast["rank_mean_us"]),
                     "imbalance_pct": 100.0 * float(slow["rel"])})
    columns = ["case", "label", "mean_us", "slowest_rank", "slowest_us", "fastest_rank", "fastest_us",
               "imbalance_pct"]
    return pd.DataFrame(rows, columns=columns)


def most_imbalanced(table: pd.DataFrame, limit: int) -> pd.DataFrame:
    """The ``limit`` cases with the largest imbalance, back in case order."""
    return table.nlargest(limit, "imbalance_pct").sort_values("case").reset_index(drop=True)
