"""Figures of trainer traces (kind ``train``) and of scaling series of them (PNG + SVG via plots.py).

Per trace (definitions in ``train.py``):

- :func:`breakdown_figure`: stacked bars per case (algorithm, bucket cap) of the slowest rank's
  data / forward / backward / exposed communication / optimizer time per iteration.
- :func:`bucket_cap_figure`: the bucket-size sweep: time per iteration, communication and exposed
  communication vs cap, best cap starred.
- :func:`overlap_figure`: share of the allreduce time hidden behind backward per cap.
- :func:`train_contention_figure`: process CPU / (wall × threads) per rank and case, and the
  communication thread's CPU/wall.
- per-rank compute imbalance: :func:`plots.imbalance_figure` (kind train → compute per step).

Per scaling group (traces of one configuration at several rank counts):

- :func:`scaling_figure`: strong: speedup and parallel efficiency vs ranks with the ideal lines;
  weak: efficiency t(p0)/t(p) and time per iteration vs ranks.
- :func:`rank_breakdown_figure`: stacked bars of the breakdown per rank count.
"""
from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .plots import SIMULATED_LABEL, _new_figure, imbalance_figure
from .trace import Trace
from .train import (BREAKDOWN, ScalingGroup, breakdown_table, cases_table, has_engine_tables,
                    rank_count_breakdown, samples_per_step, step_contention, summarised)

COLOURS = ("#9e9e9e", "#4c72b0", "#55a868", "#c44e52", "#8172b2")  # one per BREAKDOWN component


def _ms(values) -> np.ndarray:
    return np.asarray(values, dtype=float) * 1e3


def _config_line(trace: Trace) -> str:
    a = trace.attrs
    per_step, unit = samples_per_step(trace)
    return (f"{a.get('trainer', '?')} {a.get('model_name', '')} · {a.get('scaling', '?')} scaling · global batch "
            f"{a.get('global_batch', '?')} ({per_step:.0f} {unit}/step) · {a.get('omp_threads', '?')} thread(s)/rank · "
            f"{'overlapped' if int(a.get('overlap', 1)) else 'NOT overlapped'}\n"
            f"mean over summarised steps (excluded: {a.get('summary_excludes', 'the first step')})")


def _stacked_bars(ax, x, table, width=0.6) -> None:
    """Stacked bars of the BREAKDOWN columns of ``table`` (seconds) in ms, total written on top."""
    bottom = np.zeros(len(table))
    for (label, col), colour in zip(BREAKDOWN, COLOURS):
        values = _ms(table[col].fillna(0.0))
        ax.bar(x, values, width, bottom=bottom, label=label, color=colour, edgecolor="white", lw=0.5)
        bottom += values
    for xi, total in zip(x, _ms(table["iteration_s"])):
        if np.isfinite(total):
            ax.text(xi, total, f"{total:.3g} ms", ha="center", va="bottom", fontsize=8)
    ax.set_ylim(0, max(float(np.nanmax(bottom)) if len(bottom) else 1.0, 1e-9) * 1.45)  # room for the legend
    ax.set_ylabel("time per iteration (ms; slowest rank's phases)")


def breakdown_figure(trace: Trace) -> Figure:
    """Stacked bars per case: where the slowest rank's step goes (mean over summarised steps)."""
    table = breakdown_table(trace)
    fig, ax = _new_figure(trace, "per-iteration latency breakdown per case (slowest rank of each step)",
                          _config_line(trace))
    x = np.arange(len(table))
    _stacked_bars(ax, x, table)
    best = table["iteration_s"].idxmin() if table["iteration_s"].notna().any() else None
    ax.set_xticks(x)
    ax.set_xticklabels([f"{r.algorithm}\ncap {r.bucket_cap}" + (" ★ best" if i == best else "")
                        + f"\n({r.steps} steps)" for i, r in enumerate(table.itertuples())], fontsize=8)
    ax.set_xlabel("case: allreduce algorithm and DDP bucket cap (MiB; 'tensor' = one bucket per tensor)")
    ax.legend(fontsize=8, loc="upper right", framealpha=0.9)
    return fig


def bucket_cap_figure(trace: Trace) -> Figure:
    """Time per iteration, allreduce time and exposed communication vs bucket cap, best cap starred."""
    cases = cases_table(trace)
    caps = list(dict.fromkeys(cases["bucket_cap"]))  # cases_table sorts by cap_bytes
    position = {cap: i for i, cap in enumerate(caps)}
    fig, ax = _new_figure(trace, "bucket-size sweep: time per iteration and communication vs DDP bucket cap",
                          _config_line(trace))
    for algorithm, part in cases.groupby("algorithm", sort=False):
        x = part["bucket_cap"].map(position).to_numpy()
        (line,) = ax.plot(x, _ms(part["iteration_mean_s"]), "o-", ms=6,
                          label=f"{algorithm}: time per iteration (slowest rank, mean over steps)")
        c = line.get_color()
        ax.plot(x, _ms(part["exposed_comm_mean_s"]), "s--", ms=5, color=c,
                label=f"{algorithm}: exposed communication (not hidden behind backward; mean over ranks)")
        ax.plot(x, _ms(part["comm_mean_s"]), "^:", ms=5, color=c,
                label=f"{algorithm}: allreduce busy time of the communication thread (mean over ranks)")
        if part["iteration_mean_s"].notna().any():
            b = part.loc[part["iteration_mean_s"].idxmin()]
            ax.plot(position[b["bucket_cap"]], b["iteration_mean_s"] * 1e3, "*", ms=18, color=c, mec="black",
                    label=f"{algorithm}: best cap {b['bucket_cap']} ({b['iteration_mean_s'] * 1e3:.3g} ms)")
    buckets = cases.drop_duplicates("bucket_cap").set_index("bucket_cap")["buckets"]
    ax.set_xticks(range(len(caps)))
    ax.set_xticklabels([f"{c}\n({buckets[c]} bucket{'s' if buckets[c] != 1 else ''})" for c in caps])
    ax.set_xlabel("bucket cap (MiB; 'tensor' = one bucket per tensor, 'all' = one bucket)")
    ax.set_ylabel("time per iteration / per step (ms)")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=7.5)
    return fig


def overlap_figure(trace: Trace) -> Figure:
    """Overlap = 1 − wait / allreduce time per cap: mean over ranks and steps (bars), each rank (dots)."""
    cases = cases_table(trace)
    it = summarised(trace)
    per_rank = it.groupby(["case", "rank"])["overlap"].mean().reset_index()
    fig, ax = _new_figure(trace, "communication/computation overlap per bucket cap",
                          "overlap = 1 − wait_s / comm_s: share of the bucket allreduce time hidden behind backward\n"
                          "(0 = fully exposed, 100 % = fully hidden)")
    labels = list(cases["label"])
    x = np.arange(len(cases))
    bars = ax.bar(x, cases["overlap_mean"].to_numpy() * 100, 0.55, color="#4c72b0", alpha=0.75,
                  label="mean over ranks and summarised steps")
    ax.bar_label(bars, fmt="%.1f %%", fontsize=8)
    for k, row in enumerate(cases.itertuples()):
        ranks = per_rank[per_rank["case"] == row.case]
        ax.plot(np.full(len(ranks), k) + np.linspace(-0.15, 0.15, max(1, len(ranks)))[:len(ranks)],
                ranks["overlap"] * 100, "o", color="black", ms=4, label="one rank's mean" if k == 0 else None)
    ax.set_xticks(x)
    ax.set_xticklabels([lab.replace(" cap ", "\ncap ") for lab in labels])
    ax.set_xlabel("case: gradient allreduce algorithm and DDP bucket cap (MiB)")
    ax.set_ylabel("overlap (% of the allreduce time hidden behind backward)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=8)
    return fig


def train_contention_figure(trace: Trace) -> Figure:
    """Per case and rank: process CPU / (wall × threads) (solid) and the communication thread's CPU/wall."""
    table = step_contention(trace)
    cases = cases_table(trace)
    order = {case: i for i, case in enumerate(cases["case"])}
    load = (f"load average {trace.provenance.get('load_average_start', '?')} at start, "
            f"{trace.attrs.get('load_average_end', '?')} at end, {trace.provenance.get('online_cpus', '?')} CPUs, "
            f"{trace.nranks} ranks")
    fig, ax = _new_figure(trace, "contention indicator: process CPU time / (wall time × compute threads)", load)
    for rank, part in table.groupby("rank"):
        part = part.assign(x=part["case"].map(order)).sort_values("x")
        (line,) = ax.plot(part["x"], part["cpu_wall"], "o-", label=f"rank {rank}: process CPU / (wall × threads)")
        if part["comm_cpu_wall"].notna().any():
            ax.plot(part["x"], part["comm_cpu_wall"], "s--", color=line.get_color(), alpha=0.8,
                    label=f"rank {rank}: communication thread CPU / allreduce wall")
    ax.axhline(1.0, color="black", lw=1, ls=":", label="1 = every compute thread busy the whole step")
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([lab.replace(" cap ", "\ncap ") for lab in cases["label"]])
    ax.set_xlabel("case: algorithm and bucket cap (MiB)\nbelow 1: the rank waited (blocked, or runnable on a busy core);\n"
                  "the communication thread's CPU counts in the process CPU, so > 1 is possible", fontsize=9)
    ax.set_ylabel("CPU time / wall time (dimensionless)")
    top = np.nanmax(table[["cpu_wall", "comm_cpu_wall"]].to_numpy(float)) if len(table) else 1.0
    ax.set_ylim(0, max(1.25, float(top) * 1.1) if np.isfinite(top) else 1.25)
    ax.legend(fontsize=7.5)
    return fig


def train_figures(trace: Trace) -> dict[str, Figure]:
    """Every figure of one train trace written by the data-parallel engine (none for older traces)."""
    if not has_engine_tables(trace):
        return {}
    figs = {"breakdown": breakdown_figure(trace), "bucket_caps": bucket_cap_figure(trace)}
    if cases_table(trace)["overlap_mean"].notna().any():
        figs["overlap"] = overlap_figure(trace)
    if trace.nranks > 1 and not summarised(trace).empty:
        figs["imbalance"] = imbalance_figure(trace)
    figs["contention"] = train_contention_figure(trace)
    return figs


# --- scaling groups ----------------------------------------------------------------------------

def _group_figure(group: ScalingGroup, what: str, ncols: int = 1) -> tuple[Figure, list]:
    fig = Figure(figsize=(8.5 if ncols == 1 else 12, 5.8), layout="constrained")
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(1, ncols, k + 1) for k in range(ncols)]
    simulated = any(t.simulated for t in group.traces)
    machines = ", ".join(sorted({t.machine for t in group.traces}))
    status = f"{SIMULATED_LABEL} data in some traces" if simulated else "measured data"
    ranks = ", ".join(str(r) for r in group.table["ranks"])
    cases = "; ".join(f"{r}: {c}" for r, c in zip(group.table["ranks"], group.table["case"]))
    fig.suptitle(f"{SIMULATED_LABEL + ': ' if simulated else ''}{what}\n{group.label}\n{machines} · ranks {ranks} · "
                 f"{status}\ncase per rank count: {cases}", fontsize=10)
    for ax in axes:
        ax.grid(True, alpha=0.3)
        if simulated:
            ax.text(0.5, 0.5, SIMULATED_LABEL, transform=ax.transAxes, ha="center", va="center", rotation=25,
                    fontsize=26, color="red", alpha=0.18, zorder=0)
    return fig, axes


def _ranks_axis(ax, ranks) -> None:
    ax.set_xticks(list(ranks))
    ax.set_xlabel("MPI ranks (data-parallel workers)")


def scaling_figure(group: ScalingGroup) -> Figure:
    """Strong: speedup and efficiency vs ranks; weak: efficiency and time per iteration vs ranks."""
    tab = group.table
    p, p0 = tab["ranks"].to_numpy(float), float(tab["ranks"].iloc[0])
    if group.scaling == "strong":
        fig, (sp, eff) = _group_figure(group, "strong scaling: speedup and parallel efficiency vs ranks", 2)
        sp.plot(p, tab["ideal_speedup"], "k--", lw=1.2, label=f"ideal: p / {p0:g}")
        sp.plot(p, tab["speedup"], "o-", ms=7, label=f"measured: t({p0:g}) / t(p)")
        for x, y in zip(p, tab["speedup"]):
            sp.annotate(f"{y:.2f}×", (x, y), textcoords="offset points", xytext=(6, -12), fontsize=8)
        sp.set_ylabel(f"speedup over {p0:g} rank(s) (dimensionless)")
        sp.set_ylim(bottom=0)
        sp.legend(fontsize=8)
        _ranks_axis(sp, p)
        eff_label = f"measured: t({p0:g})·{p0:g} / (p · t(p))"
    else:
        fig, (eff, tp) = _group_figure(group, "weak scaling: efficiency and time per iteration vs ranks", 2)
        tp.plot(p, _ms(tab["iteration_s"]), "o-", ms=7, label="measured time per iteration (slowest rank)")
        tp.axhline(tab["iteration_s"].iloc[0] * 1e3, color="black", ls="--", lw=1.2,
                   label=f"ideal: constant t({p0:g})")
        tp.set_ylabel("time per iteration (ms)")
        tp.set_ylim(bottom=0)
        tp.legend(fontsize=8)
        _ranks_axis(tp, p)
        eff_label = f"measured: t({p0:g}) / t(p)"
    eff.axhline(100, color="black", ls="--", lw=1.2, label="ideal: 100 %")
    eff.plot(p, tab["efficiency"] * 100, "o-", ms=7, color="#c44e52", label=eff_label)
    for x, y in zip(p, tab["efficiency"] * 100):
        eff.annotate(f"{y:.0f} %", (x, y), textcoords="offset points", xytext=(6, 6), fontsize=8)
    eff.set_ylabel("parallel efficiency (%)")
    eff.set_ylim(0, max(110, float(np.nanmax(tab["efficiency"] * 100)) * 1.1))
    eff.legend(fontsize=8)
    _ranks_axis(eff, p)
    return fig


def rank_breakdown_figure(group: ScalingGroup) -> Figure:
    """Stacked bars per rank count: the chosen case's breakdown (slowest rank of each step)."""
    table = rank_count_breakdown(group)
    fig, (ax,) = _group_figure(group, "per-iteration latency breakdown per rank count")
    x = np.arange(len(table))
    _stacked_bars(ax, x, table)
    ax.set_xticks(x)
    ax.set_xticklabels([f"{r} rank{'s' if r != 1 else ''}\n{c}" for r, c in zip(table["ranks"], table["case"])],
                       fontsize=8)
    ax.set_xlabel("MPI ranks (and the case shown)")
    ax.legend(fontsize=8, loc="upper left", framealpha=0.9)
    return fig


def group_figures(group: ScalingGroup) -> dict[str, Figure]:
    return {"scaling": scaling_figure(group), "breakdown": rank_breakdown_figure(group)}
