"""Kind ``p2p`` (p2p_perf): one trace's figures and tables, and a sweep's cross-point view.

**One trace.** Figures: ``p2p_latency`` (one-way latency vs message size, log–log) and
``p2p_bandwidth`` (bw and bibw, every pair summed, vs size). Tables: one row per (test, size). A
case is a summary row, named 'bw 64K'; its per-call samples are the ``call`` phase (a round trip
or a window); ``compare`` matches cases by (test, bytes, window).

**Across points** (traces of one sweep, ``campaign.py``): per point and case the median over
passes of ``latency_us`` (latency rows) and ``bandwidth_GBps`` (bw, bibw), min–max as error bars:
how latency and bandwidth change from one node layout to another (a pair on one node, a pair
across two).
"""
from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from . import style
from .allreduce import bytes_axis
from .campaign import (BackendCases, Options, Point, Section, combine_points, cross_point_sweeps, data_note,
                       points_caption, points_table, spread_table, sweep_stem, sweep_title)
from .samples import phase_views
from .series import COLLECTIVE_IMBALANCE_NOTE
from .textfmt import format_bytes, markdown_table
from .trace import Trace

SUMMARY_TABLE = "summary"
KIND = "p2p"
CASE_KEYS = ("test", "bytes", "window")
CASE_AXIS = "case: test and message size"
IMBALANCE_NOTE = COLLECTIVE_IMBALANCE_NOTE
TIMELINE_NOTE = ""
BANDWIDTH_TESTS = ("bw", "bibw")

rank_times, iteration_times = phase_views("call")  # a case is timed by its calls (a round trip or a window)


def _by_test(summary: pd.DataFrame, tests) -> list[tuple[str, pd.DataFrame]]:
    return [(t, part.sort_values("bytes")) for t, part in summary.groupby("test", sort=False) if t in tests]


@style.styled
def latency_figure(trace: Trace) -> Figure:
    """One-way latency (half the mean round trip) vs message size, log–log."""
    summary = trace.table("summary")
    fig, (ax,) = style.new_figure("Point-to-point latency", style.trace_caption(
        trace, f"half the mean round trip of a ping-pong; {int(trace.attrs.get('pairs', 1))} pair(s) at once"),
        simulated=trace.simulated)
    for k, (test, part) in enumerate(_by_test(summary, ("latency",))):
        ax.plot(part["bytes"], part["latency_us"], "o-", color=style.colour(k), label=test)
    bytes_axis(ax, summary["bytes"])
    ax.set_yscale("log")
    ax.set_ylabel("one-way latency (µs)")
    style.legend_outside(ax)
    return fig


@style.styled
def bandwidth_figure(trace: Trace) -> Figure:
    """bw and bibw (every pair's bytes per second, summed) vs message size."""
    summary = trace.table("summary")
    fig, (ax,) = style.new_figure("Point-to-point bandwidth", style.trace_caption(
        trace, f"window {int(trace.attrs.get('window', 0))}, slots {trace.attrs.get('slots', '?')}, "
               f"{int(trace.attrs.get('pairs', 1))} pair(s), summed"), simulated=trace.simulated)
    for k, (test, part) in enumerate(_by_test(summary, BANDWIDTH_TESTS)):
        ax.plot(part["bytes"], part["bandwidth_GBps"], "o-", color=style.colour(k), label=test)
    bytes_axis(ax, summary["bytes"])
    style.finish_from_zero(ax, "bandwidth (GB/s, 1e9 bytes)")
    return fig


def figures(trace: Trace) -> dict[str, Figure]:
    return {"p2p_latency": latency_figure(trace), "p2p_bandwidth": bandwidth_figure(trace)}


def report_tables(trace: Trace) -> list[str]:
    summary = trace.table("summary")
    view = summary[["test", "bytes", "window", "pairs", "iters", "t_mean_us", "p50_us", "p99_us", "latency_us",
                    "bandwidth_GBps", "message_rate_M", "wrong"]]
    return [f"#### Point-to-point (figures: p2p_latency, p2p_bandwidth): {int(trace.attrs.get('pairs', 1))} pair(s) "
            f"(rank r with r + n/2), window {int(trace.attrs.get('window', 0))}, slots "
            f"{trace.attrs.get('slots', '?')}; times per call (a round trip, or a window)", "",
            markdown_table(view), ""]


def case_labels(trace: Trace) -> pd.Series:
    summary = trace.table("summary")
    return pd.Series([f"{t} {format_bytes(b)}" for t, b in zip(summary["test"], summary["bytes"])], index=summary["case"])


def case_table(trace: Trace) -> pd.DataFrame:
    return trace.table("summary")


def case_args(trace: Trace) -> dict[int, dict]:
    return {int(r["case"]): {"test": r["test"], "bytes": int(r["bytes"]), "window": int(r["window"])}
            for r in trace.table("summary").to_dict("records")}


def timeline_events(trace: Trace, pid: int, samples: pd.DataFrame):
    return None  # the standard layout: one track per rank


# --- across points ---------------------------------------------------------------------------------

def sweep_table(points: list[Point]) -> pd.DataFrame:
    """Every (test, size) of every point, passes combined: latency (µs) and bandwidth (GB/s)."""
    def per_pass(trace: Trace) -> pd.DataFrame:
        s = trace.table("summary")
        return pd.DataFrame({"test": s["test"], "bytes": s["bytes"], "latency_us": s["latency_us"],
                             "bandwidth_GBps": s["bandwidth_GBps"]})
    return combine_points(points, per_pass, ["test", "bytes"], ["latency_us", "bandwidth_GBps"])


@style.styled
def points_figure(table: pd.DataFrame, points: list[Point]) -> Figure:
    """Latency (left) and bw / bibw (right) vs size, one line per point; error bars min–max over passes."""
    fig, (lat, bw) = style.new_figure("Point-to-point across points", points_caption(points), panels=2,
                                      simulated=any(t.simulated for p in points for t in p.traces))
    k = 0
    for point, part in table.groupby("point", sort=False):
        for test, rows in part.groupby("test", sort=False):
            rows = rows.sort_values("bytes")
            ax, value = (lat, "latency_us") if test == "latency" else (bw, "bandwidth_GBps")
            ax.errorbar(rows["bytes"], rows[value], yerr=[rows[value] - rows[f"{value}_min"],
                                                          rows[f"{value}_max"] - rows[value]],
                        fmt="o-", color=style.colour(k), capsize=2, label=f"{point} {test}")
            k += 1
    bytes_axis(lat, table["bytes"])
    lat.set_yscale("log")  # latency spans decades: log, not from zero
    lat.set_ylabel("one-way latency (µs)")
    style.legend_outside(lat)
    bytes_axis(bw, table["bytes"])
    style.finish_from_zero(bw, "bandwidth (GB/s)")
    return fig


def campaign_sections(points: list[Point], options: Options) -> list[Section]:
    """One section per p2p sweep with two or more points or passes."""
    return [sweep_section(sweep) for sweep in cross_point_sweeps(points)]


def sweep_section(points: list[Point]) -> Section:
    table = sweep_table(points)
    labels = table["test"] + " " + table["bytes"].map(format_bytes)
    intro = [f"Sweep `{points[0].id.config}` (launcher {points[0].id.launcher}). Latency = summary `latency_us`, "
             "bandwidth = `bandwidth_GBps` (every pair summed), median over passes, min–max as error bars "
             "(definitions: p2p.py).", "", *data_note([t for p in points for t in p.traces]),
             markdown_table(points_table(points)), ""]
    view = table[["point", "ranks", "test", "bytes", "passes", "latency_us", "bandwidth_GBps"]]
    tables = ["#### Latency (µs) and bandwidth (GB/s) per point: medians over passes", "", markdown_table(view), "",
              "#### Pass-to-pass spread of the bandwidth: (max − min) / median over passes", "",
              markdown_table(spread_table(table.fillna({"bandwidth_GBps_spread": 0.0}), "bandwidth_GBps", labels)), ""]
    return Section(sweep_title("p2p across points", points), sweep_stem(points), intro,
                   {"p2p_by_point": points_figure(table, points)}, tables)


def backend_cases(points: list[Point]) -> BackendCases:
    """Every (test, size), passes combined: latency and bandwidth."""
    return BackendCases(sweep_table(points), ["test", "bytes"],
                        {"latency_us": "one-way latency (µs)", "bandwidth_GBps": "bandwidth (GB/s)"})
