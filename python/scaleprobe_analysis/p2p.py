"""Kind ``p2p`` (p2p_perf): one trace's figures and tables, and a sweep's cross-point view.

**One trace.** Figures: ``p2p_latency`` (one-way latency vs message size, log–log) and
``p2p_bandwidth`` (bw and bibw, every pair summed, vs size). Tables: one row per (test, size). A
case is a summary row, named 'bw 64K'; its per-call samples are the ``call`` phase (a round trip
or a window); ``compare`` matches cases by (test, bytes, window, rank_a, rank_b).

**Every pair alone** (``p2p_perf --pairs each``, trace attribute ``pair_mode``): a case per (test,
size, pair), named 'bw 64K 0-2'; the two figures show the median over the pairs with min–max
bars, ``p2p_pairs`` the matrix of the links (latency at the smallest size, bandwidth of the first
bandwidth test at the largest) and the tables give both matrices, ranks labelled with their
nodes: a slow link stands out as a row and column.

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
CASE_KEYS = ("test", "bytes", "window", "rank_a", "rank_b")
CASE_AXIS = "case: test and message size"
IMBALANCE_NOTE = COLLECTIVE_IMBALANCE_NOTE
TIMELINE_NOTE = ""
BANDWIDTH_TESTS = ("bw", "bibw")

rank_times, iteration_times = phase_views("call")  # a case is timed by its calls (a round trip or a window)


def _summary(trace: Trace) -> pd.DataFrame:
    """The summary table; traces before ``--pairs each`` get rank_a = rank_b = -1 (every pair at once)."""
    s = trace.table("summary")
    return s if "rank_a" in s.columns else s.assign(rank_a=-1, rank_b=-1)


def each_pair(trace: Trace) -> bool:
    return str(trace.attrs.get("pair_mode", "halves")) == "each"


def _per_size(summary: pd.DataFrame) -> pd.DataFrame:
    """Per (test, bytes): latency and bandwidth, the median over the pairs with min and max (one row
    each already when every pair ran at once)."""
    g = summary.groupby(["test", "bytes"], sort=False)[["latency_us", "bandwidth_GBps"]]
    out = g.median()
    for stat in ("min", "max"):
        out = out.join(g.agg(stat).add_suffix(f"_{stat}"))
    return out.reset_index()


def _by_test(summary: pd.DataFrame, tests) -> list[tuple[str, pd.DataFrame]]:
    return [(t, part.sort_values("bytes")) for t, part in _per_size(summary).groupby("test", sort=False) if t in tests]


def _errorbars(ax, part: pd.DataFrame, value: str, colour, label: str) -> None:
    ax.errorbar(part["bytes"], part[value], yerr=[part[value] - part[f"{value}_min"], part[f"{value}_max"] - part[value]],
                fmt="o-", color=colour, capsize=2, label=label)


def pair_matrix(trace: Trace, test: str, value: str, at: str) -> pd.DataFrame:
    """--pairs each: ``value`` of ``test`` at the smallest (``at='min'``) or largest size as a rank x rank
    matrix (symmetric: a pair ran once, its rank_a sending in bw), rows and columns 'rank (node)'."""
    s = _summary(trace)
    s = s[(s["test"] == test) & (s["rank_a"] >= 0)]
    if s.empty:
        return pd.DataFrame()
    size = s["bytes"].min() if at == "min" else s["bytes"].max()
    s = s[s["bytes"] == size]
    n = int(trace.nranks)
    ranks = trace.tables.get("ranks")
    node = {int(r): str(h) for r, h in zip(ranks["rank"], ranks["node"])} if ranks is not None else {}
    labels = [f"{r} ({node[r]})" if r in node else str(r) for r in range(n)]
    m = pd.DataFrame(float("nan"), index=labels, columns=labels)
    for a, b, v in zip(s["rank_a"], s["rank_b"], s[value]):
        m.iloc[int(a), int(b)] = m.iloc[int(b), int(a)] = float(v)
    m.attrs["bytes"] = int(size)
    return m


@style.styled
def latency_figure(trace: Trace) -> Figure:
    """One-way latency (half the mean round trip) vs message size, log–log."""
    summary = trace.table("summary")
    fig, (ax,) = style.new_figure("Point-to-point latency", style.trace_caption(
        trace, f"half the mean round trip of a ping-pong; {_pairs_words(trace)}"),
        simulated=trace.simulated)
    for k, (test, part) in enumerate(_by_test(summary, ("latency",))):
        _errorbars(ax, part, "latency_us", style.colour(k), test)
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
               f"{_pairs_words(trace)}"), simulated=trace.simulated)
    for k, (test, part) in enumerate(_by_test(summary, BANDWIDTH_TESTS)):
        _errorbars(ax, part, "bandwidth_GBps", style.colour(k), test)
    bytes_axis(ax, summary["bytes"])
    style.finish_from_zero(ax, "bandwidth (GB/s, 1e9 bytes)")
    return fig


def _pairs_words(trace: Trace) -> str:
    n = int(trace.attrs.get("pairs", 1))
    return f"each of {n} pairs alone: median over pairs, min–max bars" if each_pair(trace) else \
        f"{n} pair(s) at once, summed"


def _matrices(trace: Trace) -> list[tuple[str, pd.DataFrame]]:
    """(title, matrix) of --pairs each: latency at the smallest size, the first bandwidth test at the largest."""
    out = []
    tests = list(dict.fromkeys(_summary(trace)["test"]))
    if "latency" in tests:
        out.append(("one-way latency (µs)", pair_matrix(trace, "latency", "latency_us", "min")))
    for test in (t for t in tests if t in BANDWIDTH_TESTS):
        out.append((f"{test} bandwidth (GB/s)", pair_matrix(trace, test, "bandwidth_GBps", "max")))
        break
    return [(f"{title}, {format_bytes(m.attrs['bytes'])}-byte messages", m) for title, m in out if not m.empty]


@style.styled
def pairs_figure(trace: Trace) -> Figure:
    """--pairs each: the links as rank x rank matrices (latency, bandwidth)."""
    mats = _matrices(trace)
    fig, axes = style.new_figure("Point-to-point between every pair of ranks", style.trace_caption(
        trace, "each pair alone, the others waiting"), panels=len(mats), simulated=trace.simulated)
    for ax, (title, m) in zip(axes, mats):
        image = ax.imshow(m.to_numpy(dtype=float), cmap="viridis")
        ax.set_xticks(range(len(m.columns)), m.columns, rotation=90, fontsize=7)
        ax.set_yticks(range(len(m.index)), m.index, fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.grid(False)
        fig.colorbar(image, ax=ax, shrink=0.8)
    return fig


def figures(trace: Trace) -> dict[str, Figure]:
    figs = {"p2p_latency": latency_figure(trace), "p2p_bandwidth": bandwidth_figure(trace)}
    if each_pair(trace) and _matrices(trace):
        figs["p2p_pairs"] = pairs_figure(trace)
    return figs


def report_tables(trace: Trace) -> list[str]:
    summary = _summary(trace)
    columns = ["test", "bytes", "window", "pairs", "iters", "t_mean_us", "p50_us", "p99_us", "latency_us",
               "bandwidth_GBps", "message_rate_M", "wrong"]
    if each_pair(trace):
        columns[3:4] = ["rank_a", "rank_b"]
        layout = f"each of the {int(trace.attrs.get('pairs', 1))} rank pairs alone in turn, the others waiting"
    else:
        layout = f"{int(trace.attrs.get('pairs', 1))} pair(s) (rank r with r + n/2) at once"
    out = [f"#### Point-to-point (figures: p2p_latency, p2p_bandwidth{', p2p_pairs' if each_pair(trace) else ''}): "
           f"{layout}, window {int(trace.attrs.get('window', 0))}, slots {trace.attrs.get('slots', '?')}; times per "
           "call (a round trip, or a window)", "", markdown_table(summary[columns]), ""]
    for title, m in _matrices(trace) if each_pair(trace) else []:
        out += [f"#### Every pair: {title} (row and column: rank (node))", "",
                markdown_table(m.reset_index(names="rank")), ""]
    return out


def case_labels(trace: Trace) -> pd.Series:
    summary = _summary(trace)
    return pd.Series([f"{t} {format_bytes(b)}" + (f" {a}-{c}" if a >= 0 else "")
                      for t, b, a, c in zip(summary["test"], summary["bytes"], summary["rank_a"], summary["rank_b"])],
                     index=summary["case"])


def case_table(trace: Trace) -> pd.DataFrame:
    return _summary(trace)


def case_args(trace: Trace) -> dict[int, dict]:
    return {int(r["case"]): {"test": r["test"], "bytes": int(r["bytes"]), "window": int(r["window"]),
                             "pair": f"{int(r['rank_a'])}-{int(r['rank_b'])}"}
            for r in _summary(trace).to_dict("records")}


def timeline_events(trace: Trace, pid: int, samples: pd.DataFrame):
    return None  # the standard layout: one track per rank


# --- across points ---------------------------------------------------------------------------------

def sweep_table(points: list[Point]) -> pd.DataFrame:
    """Every (test, size) of every point, passes combined: latency (µs) and bandwidth (GB/s)."""
    def per_pass(trace: Trace) -> pd.DataFrame:  # --pairs each: the median over the pairs
        return _per_size(_summary(trace))[["test", "bytes", "latency_us", "bandwidth_GBps"]]
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
