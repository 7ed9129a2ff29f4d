"""Measured and SIMULATED allreduce points side by side, with the simulation's error on the measured ones.

A campaign (or any report folder) that holds allreduce traces of both kinds of data — measured
(root attribute ``simulated = 0``) and simulated (``simulated = 1``, e.g. ``scripts/simulate`` or
``submit-sweep --simulate flat``; docs/simulation.md) — gets one cross-point section, "Allreduce:
measured vs simulated (SIMULATED)", wherever a measured and a simulated case share

- the **case**: ``allreduce.CASE_KEYS`` (algorithm, dtype, op, placement, bytes), and
- the **rank count** (the trace's ``nranks``; nodes and ranks per node may differ: a simulated
  platform is compared with whatever layout the measured run had).

**Numbers.** A trace's time of a case is its summary's ``p50_us`` (median over the timed calls of
the slowest rank's time: robust to a measured run's outlying calls, and to a simulated run's start
skew between ranks, which ``t_mean`` carries); over several traces of one kind (passes, layouts) the
**median**, as results/2026-11-29-vm-f6m207-simulated-vs-vm-cluster compares them.
The **relative error** at a measured point is (simulated − measured) / measured; the table gives it
in percent with the traces each side used. Simulated points without a measured twin (and measured
without a simulated one) are left out: the section shows only where the two can be compared.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from . import allreduce, style
from .campaign import Section, data_note
from .textfmt import format_bytes, markdown_table
from .trace import Trace

KEYS = (*allreduce.CASE_KEYS, "ranks")
STAT = "p50_us"
TITLE = "Allreduce: measured vs simulated (SIMULATED)"
STEM = "measured-vs-simulated-allreduce"


def _times(traces: list[Trace]) -> pd.DataFrame:
    """One row per trace and summary case: the case keys, ranks, STAT, simulated, trace name."""
    frames = []
    for t in traces:
        if t.kind != allreduce.KIND or "summary" not in t.tables:
            continue
        s = t.table("summary")
        frame = s[list(allreduce.CASE_KEYS) + [STAT]].copy()
        frames.append(frame.assign(ranks=t.nranks, simulated=bool(t.simulated), trace=t.path.name))
    if not frames:
        return pd.DataFrame(columns=[*KEYS, STAT, "simulated", "trace"])
    return pd.concat(frames, ignore_index=True)


def comparison_table(traces: list[Trace]) -> pd.DataFrame:
    """Per case and rank count with both kinds of data: the measured and simulated time (µs, median
    over traces), how many traces each, and the simulated time's relative error (%) at the measured point.
    Empty (with these columns) when nothing matches."""
    columns = [*KEYS, "measured_us", "measured_traces", "simulated_us", "simulated_traces", "error_pct"]
    times = _times(traces)
    sides = {}
    for simulated, name in ((False, "measured"), (True, "simulated")):
        part = times[times["simulated"] == simulated]
        sides[name] = part.groupby(list(KEYS), as_index=False).agg(
            **{f"{name}_us": (STAT, "median"), f"{name}_traces": ("trace", "nunique")})
    if sides["measured"].empty or sides["simulated"].empty:
        return pd.DataFrame(columns=columns)
    table = sides["measured"].merge(sides["simulated"], on=list(KEYS), how="inner")
    table["error_pct"] = (table["simulated_us"] - table["measured_us"]) / table["measured_us"] * 100
    return table.sort_values(["algorithm", "ranks", "dtype", "op", "placement", "bytes"])[columns].reset_index(drop=True)


def _label(row) -> str:
    return f"{row['algorithm']} {int(row['ranks'])} ranks"


@style.styled
def overlay_figure(table: pd.DataFrame, traces: list[Trace]) -> Figure:
    """Left: time per call against size, measured (filled, solid) and simulated (hollow, dashed) per
    algorithm and rank count. Right: the simulated time's relative error at each measured point."""
    measured = sum(not t.simulated for t in traces)
    caption = (f"{measured} measured and {len(traces) - measured} SIMULATED trace(s); p50 per call, "
               "median over traces; error = (simulated − measured) / measured")
    fig, (times, error) = style.new_figure("Allreduce: measured vs simulated", caption, panels=2, simulated=True)
    for k, (label, part) in enumerate(table.groupby(table.apply(_label, axis=1), sort=False)):
        part = part.sort_values("bytes")
        times.plot(part["bytes"], part["measured_us"], "o-", color=style.colour(k), label=f"{label} (measured)")
        times.plot(part["bytes"], part["simulated_us"], "s--", mfc="none", color=style.colour(k),
                   label=f"{label} (simulated)")
        error.plot(part["bytes"], part["error_pct"], "o-", color=style.colour(k), label=label)
    for ax in (times, error):
        allreduce.bytes_axis(ax, table["bytes"])
    times.set_yscale("log")
    times.set_ylabel("time per call (µs)")
    error.axhline(0, color="black", lw=0.8)
    error.set_ylabel("(simulated − measured) / measured (%)")
    style.legend_outside(times)
    return fig


def sections(traces: list[Trace]) -> list[Section]:
    """The section, or nothing when no allreduce case has both measured and simulated data."""
    table = comparison_table(traces)
    if table.empty:
        return []
    ranks = set(table["ranks"])
    mine = [t for t in traces if t.kind == allreduce.KIND and "summary" in t.tables and t.nranks in ranks]
    shown = table.assign(size=table["bytes"].map(format_bytes),
                         measured_us=table["measured_us"].round(3), simulated_us=table["simulated_us"].round(3),
                         error_pct=table["error_pct"].round(2))
    errors = np.abs(table["error_pct"].to_numpy())
    intro = ["SIMULATED beside measured: every allreduce case (algorithm, dtype, op, placement, size) at a rank "
             "count that has both measured and simulated traces; time = p50 per call (the slowest rank's, median over "
             "the timed calls), median over the traces "
             "of each kind; error = (simulated − measured) / measured, at the measured points "
             f"(python/scaleprobe_analysis/simulated_vs_measured.py). {len(table)} point(s); |error| median "
             f"{np.median(errors):.2f} %, largest {errors.max():.2f} %.", "", *data_note(mine)]
    columns = ["algorithm", "ranks", "dtype", "op", "placement", "size", "bytes", "measured_us", "measured_traces",
               "simulated_us", "simulated_traces", "error_pct"]
    return [Section(TITLE, STEM, intro, {"overlay": overlay_figure(table, mine)},
                    ["#### Measured vs SIMULATED time per call (µs) and the simulation's error (%)", "",
                     markdown_table(shown[columns]), ""])]
