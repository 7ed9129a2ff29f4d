"""Per-rank imbalance: each rank's mean time per case against the mean over ranks, for any kind.

The kind's module (``kinds.py``) says what is compared (``rank_times``): allreduce and
bucket_sweep the samples of the case's phase, trainers each rank's *compute* per step. Those are
averaged per rank (:func:`samples.rank_means`); ``imbalance_pct`` is how much the slowest rank
(largest mean) exceeds the mean over ranks. Read it with care for collectives: the rank that
*arrives last* waits least, so a long time on one rank often means the others were late (skewed
arrival, a descheduled peer), not that this rank's work was slower. A trainer's compute has no
such waiting in it: there a high value is a slow rank (an oversubscribed core, a noisy neighbour)
or uneven work.

The figure is a heat map rank × case of ``rank mean ÷ mean over ranks − 1`` (%), the slowest
rank of each case boxed; with more than :data:`MAX_CASES` cases only the most imbalanced are drawn.
The report lists the :data:`TABLE_ROWS` most imbalanced cases.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from . import style
from .kinds import module_for
from .samples import rank_means
from .textfmt import markdown_table
from .trace import Trace

MAX_CASES = 32  # columns of the heat map: more would make the labels unreadable
TABLE_ROWS = 10
COLUMNS = ["case", "label", "mean_us", "slowest_rank", "slowest_us", "fastest_rank", "fastest_us", "imbalance_pct"]


def rank_samples(trace: Trace) -> pd.DataFrame | None:
    """What the trace's kind compares across ranks, or None when imbalance does not apply to it."""
    module = module_for(trace.kind)
    return None if module is None else module.rank_times(trace)


def imbalance_table(trace: Trace) -> pd.DataFrame:
    """One row per case: mean over ranks, slowest and fastest rank and the imbalance in % (empty if not applicable)."""
    samples = rank_samples(trace)
    if samples is None or samples.empty:
        return pd.DataFrame(columns=COLUMNS)
    labels = module_for(trace.kind).case_labels(trace)
    rows = []
    for case, part in rank_means(samples).groupby("case", sort=True):
        slow = part.loc[part["rank_mean_us"].idxmax()]
        fast = part.loc[part["rank_mean_us"].idxmin()]
        rows.append({"case": int(case), "label": labels.get(case, str(case)),
                     "mean_us": float(slow["mean_us"]), "slowest_rank": int(slow["rank"]),
                     "slowest_us": float(slow["rank_mean_us"]), "fastest_rank": int(fast["rank"]),
                     "fastest_us": float(fast["rank_mean_us"]), "imbalance_pct": 100.0 * float(slow["rel"])})
    return pd.DataFrame(rows, columns=COLUMNS)


def most_imbalanced(table: pd.DataFrame, limit: int) -> pd.DataFrame:
    """The ``limit`` cases with the largest imbalance, back in case order."""
    return table.nlargest(limit, "imbalance_pct").sort_values("case").reset_index(drop=True)


@style.styled
def imbalance_figure(trace: Trace, max_cases: int = MAX_CASES) -> Figure:
    """Heat map rank × case: each rank's mean time ÷ the mean over ranks − 1 (%), slowest rank boxed."""
    module = module_for(trace.kind)
    table = imbalance_table(trace)
    shown = most_imbalanced(table, max_cases)
    subset = "" if len(shown) == len(table) else f"; the {len(shown)} most imbalanced of {len(table)} cases shown"
    fig, (ax,) = style.new_figure("Per-rank imbalance", style.trace_caption(
        trace, f"colour: rank mean ÷ mean over ranks − 1 (%), box: slowest rank; {module.IMBALANCE_NOTE}{subset}"),
        width=style.SINGLE_WIDTH_IN if len(shown) <= 10 else style.DOUBLE_WIDTH_IN, simulated=trace.simulated)
    grid = rank_means(rank_samples(trace)).pivot(index="rank", columns="case", values="rel").reindex(
        columns=shown["case"]) * 100
    limit = max(float(np.nanmax(np.abs(grid.to_numpy()))) if grid.size else 0.0, 1.0)
    image = ax.imshow(grid.to_numpy(), aspect="auto", cmap="RdBu_r", vmin=-limit, vmax=limit, interpolation="nearest")
    fig.colorbar(image, ax=ax, label="vs mean over ranks (%)")
    for col, row in enumerate(shown.itertuples()):
        y = list(grid.index).index(row.slowest_rank)
        ax.add_patch(Rectangle((col - 0.5, y - 0.5), 1, 1, fill=False, ec="black", lw=1.2))
    if grid.size <= 64:
        for (r, c), value in np.ndenumerate(grid.to_numpy()):
            ax.text(c, r, f"{value:+.2g}", ha="center", va="center", fontsize=style.SMALLEST_PT,
                    color="white" if abs(value) > 0.6 * limit else "black")
    ax.grid(False)
    ax.set_xticks(range(len(shown)))
    ax.set_xticklabels(shown["label"], rotation=60, ha="right")
    ax.set_yticks(range(len(grid.index)))
    ax.set_yticklabels([str(r) for r in grid.index])
    ax.set_xlabel(module.CASE_AXIS)
    ax.set_ylabel("rank")
    return fig


def figures(trace: Trace) -> dict[str, Figure]:
    """{'imbalance': heat map} when the trace's kind compares ranks (and there is something to compare)."""
    return {"imbalance": imbalance_figure(trace)} if len(imbalance_table(trace)) else {}


def report_lines(trace: Trace) -> list[str]:
    """The most imbalanced cases as a markdown table ([] when imbalance does not apply)."""
    table = imbalance_table(trace)
    if table.empty:
        return []
    shown = table.nlargest(TABLE_ROWS, "imbalance_pct")
    which = "all cases" if len(shown) == len(table) else f"the {len(shown)} most imbalanced of {len(table)} cases"
    return ["#### Per-rank imbalance (figure: imbalance)", "",
            f"Each rank's mean time per case against the mean over ranks; {which}. `imbalance_pct` = slowest rank's "
            f"mean ÷ mean over ranks − 1 ({module_for(trace.kind).IMBALANCE_NOTE}; definitions: imbalance.py).", "",
            markdown_table(shown), ""]
