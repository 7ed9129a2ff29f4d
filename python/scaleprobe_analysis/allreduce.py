"""Kind ``allreduce`` (``allreduce_perf``): one trace's figures and tables, and a sweep's cross-point view.

**One trace.** Figures: ``latency`` (time per call vs size, log–log, with the α–β fit of
``alphabeta.py`` per series), ``busbw`` (bus bandwidth vs size with the measured memory copy
bandwidth), ``contention`` (timing thread CPU/wall per case). Tables: the α–β fit, the summary
(latency, bus bandwidth, ``vs_mpi``), the contention indicator. A case is a summary row, named
'ring 1K' (series + size); its per-iteration samples are the ``allreduce`` phase; ``compare``
matches cases by (algorithm, dtype, op, placement, bytes).

**Across points** (traces of one sweep, ``campaign.py``; definitions of every number):

- **size**: the summary's ``bytes`` under strong scaling; under weak scaling the size per rank
  (``nominal_bytes``, or ``bytes / nranks`` in traces without that column), so one size is one
  curve across rank counts. Kind ``collective`` (collective.py): always ``nominal_bytes``, the size
  asked (its ``bytes`` are rounded down to whole elements per rank, so they differ by rank count).
- **time** of a case at a point: the summary's ``t_mean_us`` of each pass (mean over ranks of
  each rank's mean time per call), then the median over passes; error bars min–max over passes.
- **bus bandwidth**: the summary's ``busbw_GBps`` (bytes / t_mean × 2(n−1)/n), median over passes
  (min–max bars); 1-rank points move no bus traffic (busbw 0) and are left out of that figure.
- **ratio to MPI_Allreduce**: the summary's ``vs_mpi`` (t_mean of the case ÷ t_mean of ``mpi`` for
  the same size, dtype, op and placement, measured in the same pass), median over passes.
- **effect of ranks per node**: at a rank count reached by several layouts (nodes × tasks per
  node), each layout's time and its ratio to the layout with the fewest nodes.
- **α–β per point**: :func:`alphabeta.fit_alpha_beta` of the point's times (median over passes)
  against the message ``bytes``, per series.
- **pass-to-pass spread** of a case: (max − min) / median of its time over passes; per point the
  median and the largest over cases.

Figures show the smallest, a middle and the largest size (:func:`chosen_sizes`); tables show
every size when there are at most :data:`TABLE_SIZES`, else the same three.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from . import style
from .alphabeta import fit_alpha_beta, fit_summary
from .campaign import (BackendCases, Options, Point, Section, combine_points, cross_point_sweeps, data_note,
                       layout_families, points_caption, points_table, spread_table, sweep_command, sweep_stem,
                       sweep_title)
from .samples import phase_views
from .series import (COLLECTIVE_IMBALANCE_NOTE, series, series_columns, series_labels, timing_contention,
                     timing_contention_figure)
from .textfmt import format_bytes, markdown_table
from .trace import Trace

SUMMARY_TABLE = "summary"  # the per-case table `export` writes
KIND = "allreduce"
CASE_KEYS = ("algorithm", "dtype", "op", "placement", "bytes")
CASE_AXIS = "case: algorithm and message size (bytes; K = 1024)"
IMBALANCE_NOTE = COLLECTIVE_IMBALANCE_NOTE
TIMELINE_NOTE = ""
TABLE_SIZES = 6

rank_times, iteration_times = phase_views("allreduce")  # a case is timed by the allreduce phase


def collective_name(trace: Trace) -> str:
    """The trace's collective as a title word: 'Allreduce', or collective_perf's (kind ``collective``)."""
    return str(trace.attrs.get("collective", "allreduce")).replace("_", "-").capitalize()


def busbw_note(trace: Trace) -> str:
    if trace.kind == KIND:
        return "busbw = algbw × 2(n−1)/n"
    return f"busbw = algbw × {float(trace.attrs.get('busbw_factor', 0)):.3g} (nccl-tests' factor)"


# --- one trace -------------------------------------------------------------------------------------

def bytes_axis(ax, sizes, label: str = "message size (bytes; K = 1024)") -> None:
    """Log2 x axis ticked at (at most ~6 of) the measured sizes, labelled 8, 1K, 1M, ..."""
    ax.set_xscale("log", base=2)
    sizes = np.unique(np.asarray(sizes))
    step = max(1, int(np.ceil(len(sizes) / 6)))
    ax.xaxis.set_major_locator(FixedLocator(sizes[::step]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v)))
    ax.set_xlabel(label)


@style.styled
def latency_figure(trace: Trace, stat: str = "t_mean_us") -> Figure:
    """Time per call vs size per series (log–log), measured points and the fitted α–β line."""
    summary = trace.table("summary")
    fits = {row.series: row.fit for row in fit_summary(summary, stat).itertuples()}
    fig, (ax,) = style.new_figure(f"{collective_name(trace)} latency", style.trace_caption(trace, f"{stat}; dashed: α–β fit"),
                                  simulated=trace.simulated)
    for k, (label, part) in enumerate(series(summary)):
        ax.plot(part["bytes"], part[stat], "o", color=style.colour(k), label=label)
        fit = fits.get(label)
        if fit is not None:
            n = np.geomspace(max(part["bytes"].min(), 1), part["bytes"].max(), 100)
            ax.plot(n, fit.predict_us(n), "--", color=style.colour(k), lw=0.9)
    bytes_axis(ax, summary["bytes"])
    ax.set_yscale("log")
    ax.set_ylabel("time per call (µs)")
    handles, labels = ax.get_legend_handles_labels()
    style.legend_outside(ax, handles + [Line2D([], [], color="black", ls="--", lw=0.9)], labels + ["α–β fit"])
    return fig


@style.styled
def busbw_figure(trace: Trace) -> Figure:
    """Bus bandwidth vs size per series, with the measured memory copy bandwidth line."""
    summary = trace.table("summary")
    copy_bw = trace.memory_copy_GBps()
    note = "dotted: memory copy bandwidth per rank (all ranks copying)" if copy_bw else "memory copy bandwidth not measured"
    fig, (ax,) = style.new_figure(f"{collective_name(trace)} bus bandwidth", style.trace_caption(trace, f"{busbw_note(trace)}; {note}"),
                                  simulated=trace.simulated)
    for k, (label, part) in enumerate(series(summary)):
        part = part[part["busbw_GBps"] > 0]  # 1 rank: no bus traffic, busbw 0
        ax.plot(part["bytes"], part["busbw_GBps"], "o-", color=style.colour(k), label=label)
    if copy_bw is not None:
        ax.axhline(copy_bw, color="black", ls=":", lw=1.2, label=f"memory copy {copy_bw:.3g}")
    bytes_axis(ax, summary["bytes"])
    if (summary["busbw_GBps"] > 0).any() or copy_bw is not None:
        ax.set_yscale("log")
    else:
        ax.text(0.5, 0.5, "1 rank: no bus traffic", transform=ax.transAxes, ha="center", va="center")
    ax.set_ylabel("bus bandwidth (GB/s)")
    style.legend_outside(ax)
    return fig


def contention_figure(trace: Trace) -> Figure:
    """CPU/wall ratio of the timing thread per case against the message size (below 1: it waited)."""
    summary = trace.table("summary")
    return timing_contention_figure(trace, "bytes", lambda sizes: sizes, lambda ax: bytes_axis(ax, summary["bytes"]))


def figures(trace: Trace) -> dict[str, Figure]:
    return {"latency": latency_figure(trace), "busbw": busbw_figure(trace), "contention": contention_figure(trace)}


def report_tables(trace: Trace) -> list[str]:
    summary = trace.table("summary")
    fits = fit_summary(summary).drop(columns=["fit", "algorithm"])
    view = pd.DataFrame({
        "series": series_labels(summary), "size": summary["bytes"].map(format_bytes),
        "bytes": summary["bytes"], "iters": summary["iters"], "t_mean_us": summary["t_mean_us"],
        "p50_us": summary["p50_us"], "p99_us": summary["p99_us"], "busbw_GBps": summary["busbw_GBps"],
        "vs_mpi": summary["vs_mpi"], "wrong": summary["wrong"]})
    copy_bw = trace.memory_copy_GBps()
    copy_line = (f"Memory copy bandwidth per rank (STREAM-style copy, all ranks at once): {copy_bw:g} GB/s."
                 if copy_bw is not None else "Memory copy bandwidth: not measured.")
    return ["#### α–β fit (t = α + β·n, least squares on relative error, α, β ≥ 0)", "",
            markdown_table(fits), "",
            "#### Latency and bus bandwidth (figures: latency, busbw)", "", copy_line, "", markdown_table(view), "",
            "#### Contention indicator (figure: contention): CPU time / wall time of the timing thread", "",
            "Below 1 the thread waited (blocked, or runnable on a busy core); above 1 for sub-µs calls is the "
            "cost of reading the CPU clock.", "", markdown_table(timing_contention(summary, "bytes")), ""]


def case_labels(trace: Trace) -> pd.Series:
    summary = trace.table("summary")
    return pd.Series(list(series_labels(summary) + " " + summary["bytes"].map(format_bytes)), index=summary["case"])


def case_table(trace: Trace) -> pd.DataFrame:
    return trace.table("summary")


def case_args(trace: Trace) -> dict[int, dict]:
    summary = trace.table("summary")
    return {int(r["case"]): {"algorithm": r["algorithm"], "dtype": r["dtype"], "op": r["op"],
                             "placement": r["placement"], "bytes": int(r["bytes"]), "size": format_bytes(r["bytes"])}
            for r in summary.to_dict("records")}


def timeline_events(trace: Trace, pid: int, samples: pd.DataFrame):
    return None  # the standard layout: one track per rank


# --- across points -------------------------------------------------------------------------------

def per_rank_size(trace: Trace) -> pd.Series:
    """The size that names a case across points (module docstring)."""
    summary = trace.table("summary")
    if trace.kind != KIND and "nominal_bytes" in summary:
        return summary["nominal_bytes"]  # a collective's bytes are rounded down to its ranks: the size asked
    if str(trace.attrs.get("scaling", "strong")) != "weak":
        return summary["bytes"]
    if "nominal_bytes" in summary:
        return summary["nominal_bytes"]
    return summary["bytes"] // trace.nranks


def chosen_sizes(sizes) -> list:
    """The smallest, a middle and the largest size (all of them when there are three or fewer)."""
    sizes = sorted(set(sizes))
    return sizes if len(sizes) <= 3 else [sizes[0], sizes[len(sizes) // 2], sizes[-1]]


def sweep_table(points: list[Point]) -> pd.DataFrame:
    """Every case of every point, passes combined (campaign.combine_passes): time, busbw, vs_mpi."""
    keys = series_columns(pd.concat([t.table("summary") for p in points for t in p.traces]))

    def per_pass(trace: Trace) -> pd.DataFrame:
        s = trace.table("summary")
        return pd.DataFrame({"series": series_labels(s, keys), "algorithm": s["algorithm"], "size": per_rank_size(trace),
                             "bytes": s["bytes"], "t_mean_us": s["t_mean_us"], "busbw_GBps": s["busbw_GBps"],
                             "vs_mpi": s["vs_mpi"]})
    return combine_points(points, per_pass, ["series", "algorithm", "size", "bytes"], ["t_mean_us", "busbw_GBps", "vs_mpi"])


def _ranks_axis(ax, ranks) -> None:
    ranks = sorted(set(ranks))
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(ranks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("ranks (nodes × tasks per node)")


def _series_and_families(table: pd.DataFrame, points: list[Point]):
    families = layout_families(points)
    series_names = sorted(set(table["series"]))
    handles = [Line2D([], [], color=style.colour(k), lw=1.5) for k in range(len(series_names))]
    handles += [Line2D([], [], color="black", lw=0.9, **style.layout_style(k)) for k in range(len(families))]
    return series_names, families, handles, series_names + list(families.values())


@style.styled
def by_ranks_figure(table: pd.DataFrame, points: list[Point], value: str, title: str, ylabel: str,
                     positive_only: bool = False) -> Figure:
    """Small multiples over the chosen sizes: ``value`` vs ranks, colour = series, style = tasks per node."""
    sizes = chosen_sizes(table["size"])
    weak = points[0].id.scaling == "weak"
    fig, axes = style.new_figure(title, points_caption(points) + "; bars: min–max over passes",
                                 panels=len(sizes), simulated=any(p.simulated for p in points))
    series_names, families, handles, labels = _series_and_families(table, points)
    for ax, size in zip(axes, sizes):
        part = table[table["size"] == size]
        for i, name in enumerate(series_names):
            for j, (fam, _) in enumerate(families.items()):
                rows = part[(part["series"] == name) & (part["tasks_per_node"] == fam[0])
                            & (part["cpus_per_task"] == fam[1])].sort_values("ranks")
                if positive_only:
                    rows = rows[rows[value] > 0]
                if rows.empty:
                    continue
                err = [rows[value] - rows[f"{value}_min"], rows[f"{value}_max"] - rows[value]]
                ax.errorbar(rows["ranks"], rows[value], yerr=err, color=style.colour(i), capsize=2, lw=0.9,
                            elinewidth=0.7, **style.layout_style(j))
        ax.set_title(f"{format_bytes(size)}{' per rank' if weak else ''}")
        ax.set_yscale("log")
        _ranks_axis(ax, table["ranks"])
    axes[0].set_ylabel(ylabel)
    style.legend_outside(axes[-1], handles, labels)
    return fig


@style.styled
def alphabeta_figure(fits: pd.DataFrame, points: list[Point]) -> Figure:
    """α and 1/β of each point's fit against ranks: colour = series, style = tasks per node."""
    fig, (a_ax, b_ax) = style.new_figure("α–β fit per point", points_caption(points), panels=2,
                                         simulated=any(p.simulated for p in points))
    series_names, families, handles, labels = _series_and_families(fits, points)
    for i, name in enumerate(series_names):
        for j, fam in enumerate(families):
            rows = fits[(fits["series"] == name) & (fits["tasks_per_node"] == fam[0])
                        & (fits["cpus_per_task"] == fam[1])].sort_values("ranks")
            a_ax.plot(rows["ranks"], rows["alpha_us"], color=style.colour(i), lw=0.9, **style.layout_style(j))
            b_ax.plot(rows["ranks"], rows["bandwidth_GBps"].replace(np.inf, np.nan), color=style.colour(i), lw=0.9,
                      **style.layout_style(j))
    a_ax.set_ylabel("α: latency per call (µs)")
    b_ax.set_ylabel("1/β: bandwidth (GB/s)")
    for ax in (a_ax, b_ax):
        _ranks_axis(ax, fits["ranks"] if len(fits) else [1])
        ax.set_yscale("log")
    style.legend_outside(b_ax, handles, labels)
    return fig


def point_fits(table: pd.DataFrame) -> pd.DataFrame:
    """α–β of every (point, series) from the combined times (module docstring)."""
    rows = []
    for (point, name), part in table.groupby(["point", "series"], sort=False):
        try:
            fit = fit_alpha_beta(part["bytes"], part["t_mean_us"])
        except ValueError:
            continue
        first = part.iloc[0]
        rows.append({"point": point, "ranks": int(first["ranks"]), "tasks_per_node": first["tasks_per_node"],
                     "cpus_per_task": int(first["cpus_per_task"]), "series": name, "alpha_us": fit.alpha_us,
                     "beta_us_per_byte": fit.beta_us_per_byte, "bandwidth_GBps": fit.bandwidth_GBps,
                     "rms_rel_error": fit.rms_rel_error, "sizes": fit.points})
    return pd.DataFrame(rows, columns=["point", "ranks", "tasks_per_node", "cpus_per_task", "series", "alpha_us",
                                       "beta_us_per_byte", "bandwidth_GBps", "rms_rel_error", "sizes"])


def by_point(table: pd.DataFrame, value: str, sizes: list) -> pd.DataFrame:
    """Rows (size, series), one column per point in sweep order: ``value`` (median over passes)."""
    part = table[table["size"].isin(sizes)]
    wide = part.pivot_table(index=["size", "series"], columns="point", values=value, sort=True)
    order = [p for p in dict.fromkeys(table["point"]) if p in wide.columns]
    wide = wide.reindex(columns=order).reset_index()
    wide["size"] = wide["size"].map(format_bytes)
    wide.columns.name = None
    return wide


def layout_effect(table: pd.DataFrame, sizes: list) -> list[tuple[int, pd.DataFrame]]:
    """Per rank count reached by two or more layouts: time per layout and the ratio to the fewest-nodes layout."""
    out = []
    for ranks, part in table[table["size"].isin(sizes)].groupby("ranks", sort=True):
        layouts = list(dict.fromkeys(part.sort_values(["nodes", "tasks_per_node", "cpus_per_task"])["point"]))
        if len(layouts) < 2:
            continue
        wide = by_point(part, "t_mean_us", sizes)
        ref = layouts[0]
        for other in layouts[1:]:
            wide[f"{other} ÷ {ref}"] = wide[other] / wide[ref]
        out.append((int(ranks), wide.rename(columns={p: f"{p} µs" for p in layouts})))
    return out


def vs_mpi_tables(table: pd.DataFrame, sizes: list) -> list[tuple[int, pd.DataFrame]]:
    """Per size: rows = points, columns = series other than mpi, values = vs_mpi (median over passes)."""
    out = []
    others = table[table["algorithm"] != "mpi"]
    for size in sizes:
        part = others[others["size"] == size]
        if part.empty or part["vs_mpi"].isna().all():
            continue
        wide = part.pivot_table(index=["point", "ranks"], columns="series", values="vs_mpi", sort=False)
        wide = wide.reindex(index=[ix for ix in dict.fromkeys(zip(part["point"], part["ranks"])) if ix in wide.index])
        wide = wide.reset_index()
        wide.columns.name = None
        out.append((size, wide))
    return out


def campaign_sections(points: list[Point], options: Options) -> list[Section]:
    """One section per allreduce sweep with two or more points or passes (figures + tables)."""
    return [sweep_section(sweep) for sweep in cross_point_sweeps(points)]


def sweep_section(points: list[Point]) -> Section:
    """The cross-point section of one sweep (module docstring)."""
    table = sweep_table(points)
    weak = points[0].id.scaling == "weak"
    sizes = chosen_sizes(table["size"])
    table_sizes = sorted(set(table["size"])) if table["size"].nunique() <= TABLE_SIZES else sizes
    fits = point_fits(table)
    name = collective_name(points[0].traces[0])
    library = str(points[0].traces[0].attrs.get("library_call", "MPI_Allreduce"))
    figs = {"latency_vs_ranks": by_ranks_figure(table, points, "t_mean_us", f"{name} latency vs ranks",
                                                "time per call (µs)"),
            "busbw_vs_ranks": by_ranks_figure(table, points, "busbw_GBps", f"{name} bus bandwidth vs ranks",
                                              "bus bandwidth (GB/s)", positive_only=True)}
    if len(fits):
        figs["alphabeta_vs_ranks"] = alphabeta_figure(fits, points)
    size_word = "size per rank" if weak else "size"
    lines = [f"Sweep `{sweep_command(points)}` ({points[0].id.scaling} scaling, launcher {points[0].id.launcher}). "
             f"Time = summary `t_mean_us`, median over passes (min–max as error bars); bus bandwidth = summary "
             f"`busbw_GBps`, median over passes; ratio to MPI = summary `vs_mpi`, median over passes "
             f"(definitions: allreduce.py). Tables show the {size_word}s "
             f"{', '.join(format_bytes(s) for s in table_sizes)}.", "",
             *data_note([t for p in points for t in p.traces]), markdown_table(points_table(points)), ""]
    tables = ["#### Latency: median over passes of t_mean_us (µs), one column per point (nodes×tasks/node×cpus)", "",
              markdown_table(by_point(table, "t_mean_us", table_sizes).rename(columns={"size": size_word})), "",
              "#### Bus bandwidth: median over passes of busbw_GBps (GB/s)", "",
              markdown_table(by_point(table, "busbw_GBps", table_sizes).rename(columns={"size": size_word})), ""]
    effects = layout_effect(table, table_sizes)
    if effects:
        tables += ["#### Effect of ranks per node at a fixed rank count", "",
                   "Time (µs) per layout and its ratio to the layout with the fewest nodes (above 1: slower).", ""]
        for ranks, wide in effects:
            tables += [f"{ranks} ranks:", "", markdown_table(wide.rename(columns={"size": size_word})), ""]
    for size, wide in vs_mpi_tables(table, table_sizes):
        tables += [f"#### Ratio to {library} at {format_bytes(size)}{' per rank' if weak else ''} "
                   "(median over passes of vs_mpi; below 1: faster than MPI)", "", markdown_table(wide), ""]
    if len(fits):
        tables += ["#### α–β fit per point (t = α + β·n on the median times, n = message bytes)", "",
                   markdown_table(fits.drop(columns=["tasks_per_node", "cpus_per_task"])), ""]
    labels = table["series"] + " " + table["size"].map(format_bytes)
    tables += ["#### Pass-to-pass spread of the time: (max − min) / median over passes", "",
               markdown_table(spread_table(table, "t_mean_us", labels)), ""]
    return Section(sweep_title(f"{name.lower()} across points", points), sweep_stem(points), lines, figs, tables)


def backend_cases(points: list[Point]) -> BackendCases:
    """Every series at the smallest, a middle and the largest size, passes combined: time and bus bandwidth."""
    table = sweep_table(points)
    table = table[table["size"].isin(chosen_sizes(table["size"]))]
    return BackendCases(table.assign(size=table["size"].map(format_bytes)), ["series", "size"],
                        {"t_mean_us": "time per call (µs)", "busbw_GBps": "bus bandwidth (GB/s)"})
