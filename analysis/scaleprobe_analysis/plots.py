"""Figures for allreduce, bucket_sweep and train traces, written as PNG and SVG.

Figures are built on ``matplotlib.figure.Figure`` with an explicit Agg canvas instead of
pyplot, so nothing here touches matplotlib's global figure registry or backend setting.
Every title names the machine, the ranks and whether the data was measured; a trace whose
``simulated`` attribute is not 0 is stamped SIMULATED/MODELLED in the title and across the
axes.

- :func:`latency_figure`: allreduce time vs message size, log–log, with α–β fit lines.
- :func:`busbw_figure`: bus bandwidth vs size with the memory copy bandwidth for reference.
- :func:`bucket_figure`: bucket_sweep iteration time vs bucket cap, p50–p99 bars, best cap.
- :func:`contention_figure`: CPU/wall ratio of the timing thread per case.
- :func:`imbalance_figure`: heat map rank × case of each rank's mean time vs the mean over ranks
  (for train traces: each rank's mean compute time per step).

Trainer traces (kind ``train``) and their strong/weak scaling series: ``train_plots.py``;
:func:`plot_campaign` writes those too.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from .alphabeta import fit_summary
from .imbalance import imbalance_table, most_imbalanced
from .samples import rank_means
from .textfmt import format_bytes
from .trace import Campaign, Trace
from .views import best_caps, cap_order, contention, series

SIMULATED_LABEL = "SIMULATED/MODELLED"
FORMATS = ("png", "svg")


def data_status(trace: Trace) -> str:
    """'measured' or the SIMULATED/MODELLED label, from the root attribute ``simulated``."""
    return SIMULATED_LABEL if trace.simulated else "measured"


def _new_figure(trace: Trace, what: str, detail: str = "") -> tuple[Figure, object]:
    """A one-axes figure titled with what it shows, the machine, ranks and data status."""
    fig = Figure(figsize=(8.5, 5.8), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    hosts = trace.provenance.get("nhosts", "?")
    status = f"{SIMULATED_LABEL} data" if trace.simulated else "measured data"
    prefix = f"{SIMULATED_LABEL}: " if trace.simulated else ""
    fig.suptitle(f"{prefix}{what}\n{trace.machine}, {trace.nranks} ranks on {hosts} host(s) · "
                 f"{status} · {trace.path.name}" + (f"\n{detail}" if detail else ""), fontsize=10.5)
    if trace.simulated:
        ax.text(0.5, 0.5, SIMULATED_LABEL, transform=ax.transAxes, ha="center", va="center",
                rotation=25, fontsize=34, color="red", alpha=0.18, zorder=0)
    ax.grid(True, which="major", alpha=0.3)
    return fig, ax


def _bytes_axis(ax, sizes) -> None:
    """Log2 x axis ticked at (at most ~10 of) the measured sizes, labelled 8, 1K, 1M, ..."""
    ax.set_xscale("log", base=2)
    sizes = np.unique(np.asarray(sizes))
    step = max(1, int(np.ceil(len(sizes) / 10)))
    ax.xaxis.set_major_locator(FixedLocator(sizes[::step]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: format_bytes(v)))
    ax.set_xlabel("message size (bytes; K = 1024)")


def _time_unit(values_us) -> tuple[str, float]:
    """('ms', 1e-3) when times reach milliseconds, else ('µs', 1)."""
    return ("ms", 1e-3) if np.nanmax(np.asarray(values_us, dtype=float)) >= 1e3 else ("µs", 1.0)


def latency_figure(trace: Trace, stat: str = "t_mean_us") -> Figure:
    """Allreduce time per call vs size per algorithm (log–log) with the fitted α–β lines."""
    summary = trace.table("summary")
    fits = {row.series: row.fit for row in fit_summary(summary, stat).itertuples()}
    fig, ax = _new_figure(trace, f"allreduce latency ({stat}) vs message size, α–β fit per algorithm")
    for label, part in series(summary):
        (points,) = ax.plot(part["bytes"], part[stat], "o", ms=5, label=f"{label} (measured)")
        fit = fits.get(label)
        if fit is not None:
            n = np.geomspace(max(part["bytes"].min(), 1), part["bytes"].max(), 200)
            ax.plot(n, fit.predict_us(n), "--", color=points.get_color(), lw=1.2,
                    label=f"{label} fit: α={fit.alpha_us:.3g} µs, β={fit.beta_us_per_byte:.3g} µs/B "
                          f"(1/β={fit.bandwidth_GBps:.3g} GB/s)")
    _bytes_axis(ax, summary["bytes"])
    ax.set_yscale("log")
    ax.set_ylabel("time per allreduce call (µs)")
    ax.legend(fontsize=7.5, loc="upper left")
    return fig


def busbw_figure(trace: Trace) -> Figure:
    """Bus bandwidth vs size per algorithm, with the measured memory copy bandwidth line."""
    summary = trace.table("summary")
    factor = trace.attrs.get("busbw_factor", float("nan"))
    fig, ax = _new_figure(trace, "allreduce bus bandwidth vs message size")
    for label, part in series(summary):
        ax.plot(part["bytes"], part["busbw_GBps"], "o-", ms=4, label=label)
    copy_bw = trace.memory_copy_GBps()
    if copy_bw is not None:
        ax.axhline(copy_bw, color="black", ls=":", lw=1.5,
                   label=f"memory copy bandwidth per rank (all ranks copying): {copy_bw:.3g} GB/s")
    else:
        ax.text(0.01, 0.98, "memory copy bandwidth not measured", transform=ax.transAxes,
                va="top", fontsize=8)
    _bytes_axis(ax, summary["bytes"])
    ax.set_yscale("log")
    ax.set_ylabel(f"bus bandwidth (GB/s) = algbw × 2(n−1)/n = algbw × {factor:.3g}")
    ax.legend(fontsize=8, loc="lower right")
    return fig


def bucket_figure(trace: Trace) -> Figure:
    """bucket_sweep: time per iteration vs bucket cap, p50–p99 bars, best cap starred."""
    summary = trace.table("summary")
    caps = cap_order(summary)
    position = {cap: i for i, cap in enumerate(caps)}
    unit, scale = _time_unit(summary["p99_us"])
    layout = trace.attrs.get("layout", "?")
    per_iter = summary["bytes"].iloc[0] / 2**20 if len(summary) else float("nan")
    fig, ax = _new_figure(trace, f"gradient allreduce per iteration vs DDP bucket cap "
                                 f"(layout {layout}, {per_iter:.3g} MiB per iteration)")
    labels = list(series(summary))
    best = best_caps(summary).set_index("algorithm")
    for k, (label, part) in enumerate(labels):
        part = part.assign(x=part["cap"].map(position)).sort_values("x")
        x = part["x"].to_numpy() + 0.06 * (k - (len(labels) - 1) / 2)  # keep bars apart
        (line,) = ax.plot(x, part["t_mean_us"] * scale, "o-", ms=5, label=f"{label}: t_mean")
        ax.errorbar(x, part["p50_us"] * scale, yerr=[np.zeros(len(part)), (part["p99_us"] - part["p50_us"]).clip(lower=0) * scale],
                    fmt="_", ms=10, color=line.get_color(), capsize=4, lw=1, alpha=0.8,
                    label=f"{label}: p50 to p99 (bar)")
        algorithm = part["algorithm"].iloc[0]
        if algorithm in best.index:
            b = best.loc[algorithm]
            bx = x[list(part["cap"]).index(b["cap"])]
            ax.plot(bx, b["t_mean_us"] * scale, "*", ms=17, color=line.get_color(), mec="black",
                    label=f"{label}: best cap {b['cap']} ({b['t_mean_us'] * scale:.3g} {unit})")
    buckets = summary.drop_duplicates("cap").set_index("cap")["buckets"]
    ax.set_xticks(range(len(caps)))
    ax.set_xticklabels([f"{c}\n({buckets[c]} bucket{'s' if buckets[c] != 1 else ''})" for c in caps])
    ax.set_xlabel("bucket cap (MiB; 'tensor' = one bucket per tensor, 'all' = one bucket)")
    ax.set_ylabel(f"time per iteration ({unit})")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7.5)
    return fig


def contention_figure(trace: Trace) -> Figure:
    """CPU/wall ratio of the timing thread per case (below 1: it waited)."""
    summary = trace.table("summary")
    table = contention(summary, trace.kind)
    load = (f"load average {trace.provenance.get('load_average_start', '?')} at start, "
            f"{trace.attrs.get('load_average_end', '?')} at end, "
            f"{trace.provenance.get('online_cpus', '?')} CPUs")
    fig, ax = _new_figure(trace, "contention indicator: CPU time / wall time of the timing thread", load)
    if trace.kind == "bucket_sweep":
        caps = cap_order(summary)
        for label, part in table.groupby("series", sort=False):
            x = part["cap"].map({c: i for i, c in enumerate(caps)})
            ax.plot(x, part["cpu_wall"], "o-", label=label)
        ax.set_xticks(range(len(caps)))
        ax.set_xticklabels(caps)
        ax.set_xlabel("bucket cap (MiB)")
    else:
        for label, part in table.groupby("series", sort=False):
            ax.plot(part["bytes"], part["cpu_wall"], "o-", ms=4, label=label)
        _bytes_axis(ax, table["bytes"])
    ax.set_xlabel(ax.get_xlabel() + "\nbelow 1: the thread waited (blocked, or runnable on a busy core); "
                  "above 1 for sub-µs calls: cost of reading the CPU clock", fontsize=9)
    ax.axhline(1.0, color="black", lw=1, ls=":", label="1 = thread busy the whole call")
    ax.set_ylabel("cpu_mean_us / t_mean_us (dimensionless)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    return fig


IMBALANCE_MAX_CASES = 32  # columns of the heat map: more would make the labels unreadable


def imbalance_figure(trace: Trace, max_cases: int = IMBALANCE_MAX_CASES) -> Figure:
    """Heat map rank × case: each rank's mean time ÷ the mean over ranks − 1 (%), slowest rank ringed.

    With more than ``max_cases`` cases only the most imbalanced are shown (in case order).
    """
    table = imbalance_table(trace)
    shown = most_imbalanced(table, max_cases)
    subset = "" if len(shown) == len(table) else f"; the {len(shown)} most imbalanced of {len(table)} cases shown"
    if trace.kind == "train":
        fig, ax = _new_figure(trace, "per-rank imbalance: each rank's mean compute time per step vs the mean over ranks",
                              "compute = forward + backward + optimizer over the summarised steps;\n"
                              f"a slow rank here makes every other rank wait in the gradient allreduce{subset}")
    else:
        fig, ax = _new_figure(trace, "per-rank imbalance: each rank's mean time vs the mean over ranks",
                              "a rank that arrives late at a collective waits least: a long time often means "
                              f"its peers were late{subset}")
    means = rank_means(trace)
    grid = means.pivot(index="rank", columns="case", values="rel").reindex(columns=shown["case"]) * 100
    limit = max(float(np.nanmax(np.abs(grid.to_numpy()))) if grid.size else 0.0, 1.0)
    image = ax.imshow(grid.to_numpy(), aspect="auto", cmap="RdBu_r", vmin=-limit, vmax=limit,
                      interpolation="nearest")
    fig.colorbar(image, ax=ax, label="rank mean ÷ mean over ranks − 1 (%)")
    for col, row in enumerate(shown.itertuples()):
        y = list(grid.index).index(row.slowest_rank)
        ax.add_patch(Rectangle((col - 0.5, y - 0.5), 1, 1, fill=False, ec="black", lw=1.6,
                               label="slowest rank (largest mean)" if col == 0 else None))
    if grid.size <= 64:
        for (r, c), value in np.ndenumerate(grid.to_numpy()):
            ax.text(c, r, f"{value:+.2g}", ha="center", va="center", fontsize=6.5,
                    color="white" if abs(value) > 0.6 * limit else "black")
    ax.grid(False)
    for text in ax.texts[:1] if trace.simulated else []:
        text.set_zorder(3)  # keep the SIMULATED/MODELLED watermark above the heat map
    ax.set_xticks(range(len(shown)))
    ax.set_xticklabels(shown["label"], rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(grid.index)))
    ax.set_yticklabels([str(r) for r in grid.index])
    what = "bucket cap (MiB)" if trace.kind in ("bucket_sweep", "train") else "message size (bytes; K = 1024)"
    ax.set_xlabel(f"case: algorithm and {what}")
    ax.set_ylabel("rank (colour: % above/below the mean over ranks)")
    if len(shown):
        ax.legend(fontsize=8, loc="upper right")
    return fig


def figures_for(trace: Trace) -> dict[str, Figure]:
    """Every figure that applies to the trace's kind, by short name."""
    if trace.kind == "allreduce":
        return {"latency": latency_figure(trace), "busbw": busbw_figure(trace),
                "contention": contention_figure(trace), "imbalance": imbalance_figure(trace)}
    if trace.kind == "bucket_sweep":
        return {"bucket_sweep": bucket_figure(trace), "contention": contention_figure(trace),
                "imbalance": imbalance_figure(trace)}
    if trace.kind == "train":
        from .train_plots import train_figures  # train_plots builds on this module
        return train_figures(trace)
    return {}


def save_figure(fig: Figure, out_dir: Path, stem: str) -> list[Path]:
    """Write ``<stem>.png`` and ``<stem>.svg`` into ``out_dir``; return the paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in FORMATS:
        path = out_dir / f"{stem}.{ext}"
        fig.savefig(path, dpi=120)
        paths.append(path)
    return paths


def trace_stem(campaign: Campaign, trace: Trace) -> str:
    """File-name-safe label unique within the campaign: the path below its root, sans .h5."""
    rel = trace.path.relative_to(campaign.root) if trace.path.is_relative_to(campaign.root) else Path(trace.path.name)
    text = str(rel)[: -len(".h5")] if str(rel).endswith(".h5") else str(rel)
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)


def plot_campaign(campaign: Campaign, out_dir: str | Path, case: str = "best") -> dict[tuple[str, str], list[Path]]:
    """Save every figure of every trace, and of every scaling series of train traces.

    Returns {(trace stem or scaling-group stem, figure name): [png, svg]}. ``case`` picks the
    train case the scaling figures use: 'best' (each trace's fastest) or 'ALGORITHM/CAP'.
    """
    from .train import group_slug, scaling_groups
    from .train_plots import group_figures
    out_dir = Path(out_dir)
    written = {}
    for trace in campaign.traces:
        stem = trace_stem(campaign, trace)
        for name, fig in figures_for(trace).items():
            written[(stem, name)] = save_figure(fig, out_dir, f"{stem}-{name}")
    for group in scaling_groups(campaign.of_kind("train"), case):
        stem = group_slug(group)
        for name, fig in group_figures(group).items():
            written[(stem, name)] = save_figure(fig, out_dir, f"{stem}-{name}")
    return written
