"""Kind ``bucket_sweep``: one trace's figures and tables, and a sweep's cross-point view.

**One trace.** Figures: ``bucket_sweep`` (time per iteration vs bucket cap, p50–p99 bars, best
cap starred) and ``contention`` (timing thread CPU/wall per case). Tables: the cap sweep, the best
cap per algorithm, the contention indicator. A case is a summary row (algorithm, cap), named
'ring cap 5'; its per-iteration samples are the whole ``iteration`` phase (every bucket's
allreduce in turn); ``compare`` matches cases by (layout, algorithm, cap), the layout being the
root attribute ``layout``.

**Across points** (traces of one sweep, ``campaign.py``; definitions of every number):

- **time per iteration** of a case at a point: the summary's ``t_mean_us`` of each pass (mean over
  ranks of each rank's mean time per iteration), then the median over passes; error bars min–max.
- **best cap** of a series at a point: the cap with the lowest median time per iteration.
- **pass-to-pass spread** of a case: (max − min) / median of its time over passes.

Caps are ordered by ``cap_bytes`` ('tensor' = 0 first, 'all' last). Under weak scaling the
gradient grows with the ranks (``bytes``, per iteration, is in the best-cap table).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from . import style
from .campaign import (BackendCases, Options, Point, Section, combine_points, cross_point_sweeps, data_note,
                       layout_families, points_caption, points_table, spread_table, sweep_command, sweep_stem,
                       sweep_title)
from .samples import phase_views
from .series import (COLLECTIVE_IMBALANCE_NOTE, series, series_columns, series_labels, timing_contention,
                     timing_contention_figure)
from .textfmt import markdown_table
from .trace import Trace

SUMMARY_TABLE = "summary"  # the per-case table `export` writes
KIND = "bucket_sweep"
CASE_KEYS = ("layout", "algorithm", "cap")
CASE_AXIS = "case: algorithm and bucket cap (MiB)"
IMBALANCE_NOTE = COLLECTIVE_IMBALANCE_NOTE
TIMELINE_NOTE = ""
CAP_AXIS = "bucket cap (MiB)"
CAP_NOTE = "cap tensor: one bucket per tensor; all: one bucket"

rank_times, iteration_times = phase_views("iteration")  # a case is timed by the whole iteration (every bucket in turn)


def cap_order(summary: pd.DataFrame) -> list[str]:
    """Bucket caps from smallest to largest (``tensor`` first, ``all`` last).

    bucket_sweep stores ``tensor`` as cap_bytes 0 and ``all`` as the int64 maximum, so
    sorting by cap_bytes gives the natural order.
    """
    caps = summary[["cap", "cap_bytes"]].drop_duplicates("cap").sort_values("cap_bytes", kind="stable")
    return list(caps["cap"])


def best_caps(summary: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm, the row with the lowest mean iteration time."""
    best = summary.loc[summary.groupby("algorithm", sort=False)["t_mean_us"].idxmin()]
    return best[["algorithm", "cap", "buckets", "t_mean_us", "p50_us", "p99_us", "busbw_GBps"]]


def _time_unit(values_us) -> tuple[str, float]:
    """('ms', 1e-3) when times reach milliseconds, else ('µs', 1)."""
    return ("ms", 1e-3) if np.nanmax(np.asarray(values_us, dtype=float)) >= 1e3 else ("µs", 1.0)


def _cap_ticks(ax, caps: list[str], buckets: pd.Series | None = None) -> None:
    ax.set_xticks(range(len(caps)))
    ax.set_xticklabels([f"{c}\n({buckets[c]})" if buckets is not None else c for c in caps])
    ax.set_xlabel(CAP_AXIS + ("\n(buckets per iteration)" if buckets is not None else ""))


@style.styled
def bucket_figure(trace: Trace) -> Figure:
    """Time per iteration vs bucket cap: t_mean (line), p50 to p99 (bars), best cap starred."""
    summary = trace.table("summary")
    caps = cap_order(summary)
    position = {cap: i for i, cap in enumerate(caps)}
    unit, scale = _time_unit(summary["p99_us"])
    per_iter = summary["bytes"].iloc[0] / 2**20 if len(summary) else float("nan")
    fig, (ax,) = style.new_figure("Gradient allreduce vs bucket cap", style.trace_caption(
        trace, f"layout {trace.attrs.get('layout', '?')}, {per_iter:.3g} MiB per iteration; line: t_mean, bar: p50 to "
               f"p99, ★ best cap; {CAP_NOTE}"), simulated=trace.simulated)
    labels = list(series(summary))
    best = best_caps(summary).set_index("algorithm")
    for k, (label, part) in enumerate(labels):
        part = part.assign(x=part["cap"].map(position)).sort_values("x")
        x = part["x"].to_numpy() + 0.06 * (k - (len(labels) - 1) / 2)  # keep bars apart
        ax.plot(x, part["t_mean_us"] * scale, "o-", color=style.colour(k), label=label)
        ax.errorbar(x, part["p50_us"] * scale, yerr=[np.zeros(len(part)), (part["p99_us"] - part["p50_us"]).clip(lower=0) * scale],
                    fmt="_", color=style.colour(k), capsize=2, lw=0.8, alpha=0.8)
        algorithm = part["algorithm"].iloc[0]
        if algorithm in best.index:
            b = best.loc[algorithm]
            bx = x[list(part["cap"]).index(b["cap"])]
            ax.plot(bx, b["t_mean_us"] * scale, "*", ms=10, color=style.colour(k), mec="black", mew=0.5)
    _cap_ticks(ax, caps, summary.drop_duplicates("cap").set_index("cap")["buckets"])
    style.finish_from_zero(ax, f"time per iteration ({unit})")
    return fig


def contention_figure(trace: Trace) -> Figure:
    """CPU/wall ratio of the timing thread per case against the bucket cap (below 1: it waited)."""
    caps = cap_order(trace.table("summary"))
    return timing_contention_figure(trace, "cap", lambda cap: cap.map({c: i for i, c in enumerate(caps)}),
                                    lambda ax: _cap_ticks(ax, caps))


def figures(trace: Trace) -> dict[str, Figure]:
    return {"bucket_sweep": bucket_figure(trace), "contention": contention_figure(trace)}


def report_tables(trace: Trace) -> list[str]:
    summary = trace.table("summary")
    in_ms = {f"{c}_us": f"{c}_ms" for c in ("t_mean", "p50", "p99")}
    view = summary[["algorithm", "cap", "buckets", "iters", *in_ms, "busbw_GBps", "wrong"]]
    view = view.assign(**{c: view[c] / 1e3 for c in in_ms}).rename(columns=in_ms)
    best = best_caps(summary)
    best = best.assign(**{c: best[c] / 1e3 for c in in_ms}).rename(columns=in_ms)
    return [f"#### Bucket cap sweep (figure: bucket_sweep): layout `{trace.attrs.get('layout', '?')}`, "
            f"{summary['bytes'].iloc[0] / 2**20:.4g} MiB of gradients per iteration", "",
            markdown_table(view), "", "Best cap per algorithm (lowest mean time per iteration):", "",
            markdown_table(best), "",
            "#### Contention indicator (figure: contention): CPU time / wall time of the timing thread", "",
            "Below 1 the thread waited (blocked, or runnable on a busy core).", "",
            markdown_table(timing_contention(summary, "cap")), ""]


def case_labels(trace: Trace) -> pd.Series:
    summary = trace.table("summary")
    return pd.Series(list(series_labels(summary) + " cap " + summary["cap"].astype(str)), index=summary["case"])


def case_table(trace: Trace) -> pd.DataFrame:
    return trace.table("summary").assign(layout=str(trace.attrs.get("layout", "")))


def case_args(trace: Trace) -> dict[int, dict]:
    return {int(r["case"]): {"algorithm": r["algorithm"], "cap": r["cap"], "buckets": int(r["buckets"])}
            for r in trace.table("summary").to_dict("records")}


def timeline_events(trace: Trace, pid: int, samples: pd.DataFrame):
    return None  # the standard layout: one track per rank (bucket events nest in their iteration)


# --- across points -------------------------------------------------------------------------------

def sweep_table(points: list[Point]) -> pd.DataFrame:
    """Every (series, cap) of every point, passes combined: time per iteration (µs)."""
    keys = series_columns(pd.concat([t.table("summary") for p in points for t in p.traces]))

    def per_pass(trace: Trace) -> pd.DataFrame:
        s = trace.table("summary")
        return pd.DataFrame({"series": series_labels(s, keys), "cap_bytes": s["cap_bytes"], "cap": s["cap"],
                             "bytes": s["bytes"], "t_mean_us": s["t_mean_us"]})
    return combine_points(points, per_pass, ["series", "cap_bytes", "cap", "bytes"], ["t_mean_us"])


def best_cap_table(table: pd.DataFrame) -> pd.DataFrame:
    """Per point and series: the cap with the lowest median time per iteration (module docstring)."""
    best = table.loc[table.groupby(["point", "series"], sort=False)["t_mean_us"].idxmin()]
    out = best[["point", "ranks", "series", "cap", "bytes", "t_mean_us", "t_mean_us_min", "t_mean_us_max", "passes"]]
    return out.rename(columns={"bytes": "bytes_per_iteration"}).reset_index(drop=True)


@style.styled
def caps_by_point_figure(table: pd.DataFrame, points: list[Point]) -> Figure:
    """Time per iteration vs cap, one line per point (colour), style by tasks per node; a panel per series."""
    names = sorted(set(table["series"]))
    caps = list(dict.fromkeys(table.sort_values("cap_bytes")["cap"]))
    unit, scale = _time_unit(table["t_mean_us_max"])
    families = layout_families(points)
    style_of = {fam: k for k, fam in enumerate(families)}
    fig, axes = style.new_figure("Time per iteration vs bucket cap",
                                 f"{points_caption(points)}; bars: min–max over passes; {CAP_NOTE}",
                                 panels=len(names), simulated=any(p.simulated for p in points))
    drawn = set()  # points with a line in some panel (a labelled point may have series of its own)
    for ax, name in zip(axes, names):
        for k, p in enumerate(points):
            rows = table[(table["series"] == name) & (table["point"] == p.id.layout)].sort_values("cap_bytes")
            if rows.empty:
                continue
            x = rows["cap"].map({c: i for i, c in enumerate(caps)})
            err = [(rows["t_mean_us"] - rows["t_mean_us_min"]) * scale, (rows["t_mean_us_max"] - rows["t_mean_us"]) * scale]
            ax.errorbar(x, rows["t_mean_us"] * scale, yerr=err, color=style.colour(k), capsize=2, lw=0.9, elinewidth=0.7,
                        **style.layout_style(style_of[(p.id.tasks_per_node, p.id.cpus_per_task)]))
            drawn.add(k)
        ax.set_title(name)
        _cap_ticks(ax, caps)
        ax.set_ylim(bottom=0)
    axes[0].set_ylabel(f"time per iteration ({unit})")
    shown = [(k, p) for k, p in enumerate(points) if k in drawn]
    handles = [Line2D([], [], color=style.colour(k), lw=0.9,
                      **style.layout_style(style_of[(p.id.tasks_per_node, p.id.cpus_per_task)])) for k, p in shown]
    style.legend_outside(axes[-1], handles, [f"{p.id.layout} ({p.id.ranks} ranks)" for _, p in shown],
                         title="nodes×tasks×cpus")
    return fig


@style.styled
def best_cap_figure(best: pd.DataFrame, points: list[Point], caps: list[str]) -> Figure:
    """The best cap of each point against its rank count: colour = series, style = tasks per node."""
    fig, (ax,) = style.new_figure("Best bucket cap vs ranks", points_caption(points), simulated=any(p.simulated for p in points))
    families = layout_families(points)
    layout_of = {p.id.layout: (p.id.tasks_per_node, p.id.cpus_per_task) for p in points}
    names = sorted(set(best["series"]))
    for i, name in enumerate(names):
        for j, fam in enumerate(families):
            rows = best[(best["series"] == name) & (best["point"].map(layout_of) == fam)].sort_values("ranks")
            y = rows["cap"].map({c: k for k, c in enumerate(caps)}) + 0.08 * (i - (len(names) - 1) / 2)
            ax.plot(rows["ranks"], y, color=style.colour(i), lw=0.9, **style.layout_style(j))
    ax.set_yticks(range(len(caps)))
    ax.set_yticklabels(caps)
    ax.set_ylabel("best cap (MiB)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(set(best["ranks"])))
    ax.set_xticklabels([str(r) for r in sorted(set(best["ranks"]))])
    ax.minorticks_off()
    ax.set_xlabel("ranks (nodes × tasks per node)")
    handles = [Line2D([], [], color=style.colour(i), lw=1.5) for i in range(len(names))]
    handles += [Line2D([], [], color="black", lw=0.9, **style.layout_style(j)) for j in range(len(families))]
    style.legend_outside(ax, handles, names + list(families.values()))
    return fig


def campaign_sections(points: list[Point], options: Options) -> list[Section]:
    """One section per bucket_sweep sweep with two or more points or passes."""
    return [sweep_section(sweep) for sweep in cross_point_sweeps(points)]


def sweep_section(points: list[Point]) -> Section:
    """The cross-point section of one sweep (module docstring)."""
    table = sweep_table(points)
    best = best_cap_table(table)
    caps = list(dict.fromkeys(table.sort_values("cap_bytes")["cap"]))
    figs = {"caps_by_point": caps_by_point_figure(table, points), "best_cap_vs_ranks": best_cap_figure(best, points, caps)}
    wide = table.pivot_table(index=["point", "ranks", "series"], columns="cap", values="t_mean_us", sort=False)
    wide = wide.reindex(columns=caps).reset_index()
    wide.columns.name = None
    layouts = {t.attrs.get("layout", "?") for p in points for t in p.traces}
    pid = points[0].id
    intro = [f"Sweep `{sweep_command(points)}` ({pid.scaling} scaling, launcher {pid.launcher}, layout "
             f"{', '.join(sorted(layouts))}). Time per iteration = summary `t_mean_us`, median over passes (min–max as "
             "error bars); best cap = lowest median time (definitions: bucket_sweep.py).", "",
             *data_note([t for p in points for t in p.traces]), markdown_table(points_table(points)), ""]
    labels = table["series"] + " cap " + table["cap"].astype(str)
    tables = ["#### Time per iteration (µs): median over passes of t_mean_us, one column per cap", "",
              markdown_table(wide), "",
              "#### Best cap per point (µs; min and max over passes of that cap's time)", "", markdown_table(best), "",
              "#### Pass-to-pass spread of the time per iteration: (max − min) / median over passes", "",
              markdown_table(spread_table(table, "t_mean_us", labels)), ""]
    return Section(sweep_title("bucket_sweep across points", points), sweep_stem(points), intro, figs, tables)


def backend_cases(points: list[Point]) -> BackendCases:
    """Every (series, cap), passes combined: time per iteration."""
    return BackendCases(sweep_table(points), ["series", "cap"], {"t_mean_us": "time per iteration (µs)"})
