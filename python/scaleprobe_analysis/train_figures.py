"""Figures of trainer traces (kind ``train``) and of their scaling groups (definitions: ``train_tables.py``).

Per trace:

- :func:`breakdown_figure`: stacked bars per case (algorithm, bucket cap) of the slowest rank's
  data / forward / backward / exposed communication / optimizer time per iteration (traces with
  the overlap modes: communication inside backward, and the exposed part split into waiting for
  the slowest peer and communication after all were ready; ``train_tables.BREAKDOWN_SPLIT``).
- :func:`bucket_cap_figure`: the bucket-size sweep: time per iteration, communication and exposed
  communication vs cap, best cap starred.
- :func:`hidden_figure`: exposed communication against the same run's no-overlap allreduce, hidden fraction.
- :func:`contention_figure`: process CPU / (wall × threads) per rank and case, and the
  communication thread's CPU/wall.

Per scaling group (one configuration at several points nodes × tasks per node × cpus per task):

- :func:`scaling_figure`: strong: speedup and parallel efficiency vs ranks with the ideal lines;
  weak: efficiency t(p0)/t(p) and time per iteration vs ranks; one series per tasks per node,
  min–max over passes as error bars.
- :func:`point_breakdown_figure`: stacked bars of the breakdown per point (medians over passes).
"""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from . import style
from .trace import Trace
from .train_tables import (BREAKDOWN, ScalingGroup, breakdown_components, breakdown_table, cases_table, no_comm,
                           samples_per_step, step_contention)

COLOURS = ("#9e9e9e", "#4c72b0", "#55a868", "#c44e52", "#8172b2")  # one per BREAKDOWN component
# Every component's colour by column (BREAKDOWN's as above; the split's exposed parts in reds).
COLOUR_OF = {**{col: c for (_, col), c in zip(BREAKDOWN, COLOURS)}, "progress_s": "#dd8452",
             "exposed_wait_peers_s": "#e8a2a4", "after_ready_s": "#c44e52"}
SHORT = {"exposed communication (wait + average)": "exposed comm.",  # legend labels that fit a column
         "communication inside backward (progress)": "comm. in backward (progress)",
         "waiting for the slowest peer's backward": "waiting for slowest peer",
         "exposed communication after all were ready": "exposed comm. after all ready"}


def _ms(values) -> np.ndarray:
    return np.asarray(values, dtype=float) * 1e3


def _caption(trace: Trace, extra: str = "") -> str:
    a = trace.attrs
    per_step, unit = samples_per_step(trace)
    if no_comm(trace):
        overlap = "no communication (--no-comm)"
    elif "overlap_mode" in a:
        overlap = f"overlap {a['overlap_mode']}"
    else:  # older traces: a communication thread, or none
        overlap = "overlapped" if int(a.get("overlap", 1)) else "NOT overlapped"
    config = (f"{a.get('trainer', '?')} {a.get('model_name', '')}, {a.get('scaling', '?')} scaling, global batch "
              f"{a.get('global_batch', '?')} ({per_step:.0f} {unit}/step), {a.get('omp_threads', '?')} thread(s)/rank, "
              f"{overlap}; mean over summarised steps")
    return style.trace_caption(trace, config + (f"; {extra}" if extra else ""))


def _stacked_bars(ax, x, table, components=BREAKDOWN, width=0.6) -> None:
    """Stacked bars of the ``components`` columns of ``table`` (seconds) in ms, total written on top."""
    bottom = np.zeros(len(table))
    for label, col in components:
        values = _ms(table[col].fillna(0.0))
        ax.bar(x, values, width, bottom=bottom, label=SHORT.get(label, label), color=COLOUR_OF[col], edgecolor="white",
               lw=0.4)
        bottom += values
    for xi, total in zip(x, _ms(table["iteration_s"])):
        if np.isfinite(total):
            ax.text(xi, total, f"{total:.3g}", ha="center", va="bottom", fontsize=style.SMALLEST_PT)
    ax.set_ylim(0, max(float(np.nanmax(bottom)) if len(bottom) else 1.0, 1e-9) * 1.15)
    ax.set_ylabel("time per iteration (ms)")


def _case_ticks(ax, labels, rotation=0) -> None:
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels([lab.replace(" cap ", "\ncap ") for lab in labels], rotation=rotation)
    ax.set_xlabel("case: gradient allreduce algorithm and bucket cap (MiB)")


@style.styled
def breakdown_figure(trace: Trace) -> Figure:
    """Stacked bars per case: where the slowest rank's step goes (mean over summarised steps)."""
    table = breakdown_table(trace)
    # The full width: the legend outside (up to seven phases) left a column too narrow for the bars'
    # x label, which ran off the figure's left edge.
    fig, (ax,) = style.new_figure("Step time breakdown", _caption(trace, "slowest rank of each step; ★ fastest case"),
                                  simulated=trace.simulated, width=style.DOUBLE_WIDTH_IN)
    _stacked_bars(ax, np.arange(len(table)), table, breakdown_components([trace]))
    best = table["iteration_s"].idxmin() if table["iteration_s"].notna().any() else None
    _case_ticks(ax, [r.label + (" ★" if i == best else "") for i, r in enumerate(table.itertuples())])
    style.legend_outside(ax)
    return fig


@style.styled
def bucket_cap_figure(trace: Trace) -> Figure:
    """Time per iteration, allreduce time and exposed communication vs bucket cap, best cap starred."""
    cases = cases_table(trace)
    caps = list(dict.fromkeys(cases["bucket_cap"]))  # cases_table sorts by cap_bytes
    position = {cap: i for i, cap in enumerate(caps)}
    mode = trace.attrs.get("overlap_mode", "thread")  # older traces: a communication thread
    if mode == "thread":
        dotted, busy = "allreduce busy time of the communication thread", "allreduce busy"
    else:
        dotted = "the buckets' allreduce time, started to finished" + (", up to 2 in flight" if mode == "progress" else "")
        busy = "allreduce"
    fig, (ax,) = style.new_figure("Time per iteration vs bucket cap", _caption(
        trace, f"solid: time per iteration (slowest rank); dashed: exposed communication; dotted: {dotted} "
               "(means over ranks)"), simulated=trace.simulated)
    for k, (algorithm, part) in enumerate(cases.groupby("algorithm", sort=False)):
        x = part["bucket_cap"].map(position).to_numpy()
        c = style.colour(k)
        ax.plot(x, _ms(part["iteration_mean_s"]), "o-", color=c, label=f"{algorithm}: iteration")
        ax.plot(x, _ms(part["exposed_comm_mean_s"]), "s--", color=c, label=f"{algorithm}: exposed comm.")
        ax.plot(x, _ms(part["comm_mean_s"]), "^:", color=c, label=f"{algorithm}: {busy}")
        if part["iteration_mean_s"].notna().any():
            b = part.loc[part["iteration_mean_s"].idxmin()]
            ax.plot(position[b["bucket_cap"]], b["iteration_mean_s"] * 1e3, "*", ms=10, color=c, mec="black", mew=0.5)
    buckets = cases.drop_duplicates("bucket_cap").set_index("bucket_cap")["buckets"]
    ax.set_xticks(range(len(caps)))
    ax.set_xticklabels([f"{c}\n({buckets[c]})" for c in caps])
    ax.set_xlabel("bucket cap (MiB)\n(buckets per step)")
    style.finish_from_zero(ax, "time per step (ms)")
    return fig


@style.styled
def hidden_figure(trace: Trace) -> Figure:
    """Per case: exposed communication against the same run's no-overlap allreduce of the same buckets."""
    cases = cases_table(trace)
    x = np.arange(len(cases))
    fig, (ax,) = style.new_figure("Exposed vs no-overlap communication", _caption(
        trace, "hidden = 1 − exposed / no-overlap allreduce of the same buckets (same run); mean over ranks and steps"),
        simulated=trace.simulated)
    ax.bar(x - 0.2, cases["reference_comm_s"] * 1e3, 0.38, color="#9e9e9e", label="no-overlap allreduce (reference)")
    split = {"exposed_wait_peers_mean_s", "exposed_after_ready_mean_s"} <= set(cases)
    if split and cases["exposed_wait_peers_mean_s"].notna().all():
        # The exposed wait in its two parts (older traces have only the sum): most of a negative
        # "hidden" is often the wait for a slower peer's backward, which the reference, after a
        # barrier, leaves out.
        peers = cases["exposed_wait_peers_mean_s"] * 1e3
        ax.bar(x + 0.2, peers, 0.38, color=COLOUR_OF["exposed_wait_peers_s"], label="exposed: waiting for slowest peer")
        bars = ax.bar(x + 0.2, cases["exposed_comm_mean_s"] * 1e3 - peers, 0.38, bottom=peers,
                      color=COLOUR_OF["after_ready_s"], label="exposed: after all were ready")
    else:
        bars = ax.bar(x + 0.2, cases["exposed_comm_mean_s"] * 1e3, 0.38, color="#c44e52", label="exposed with overlap")
    ax.bar_label(bars, labels=[f"{h:+.0%}" if np.isfinite(h) else "" for h in cases["hidden_fraction"]],
                 fontsize=style.SMALLEST_PT)
    _case_ticks(ax, list(cases["label"]))
    style.finish_from_zero(ax, "communication per step (ms)")
    ax.set_ylim(top=ax.get_ylim()[1] * 1.12)  # room for the labels above the tallest bar
    return fig


@style.styled
def contention_figure(trace: Trace) -> Figure:
    """Per case and rank: process CPU / (wall × threads) (solid) and the communication thread's CPU/wall."""
    table = step_contention(trace)
    cases = cases_table(trace)
    order = {case: i for i, case in enumerate(cases["case"])}
    if trace.attrs.get("overlap_mode", "thread") == "thread":
        note = ("solid: process CPU / (wall × compute threads); dashed: communication thread CPU / allreduce wall; "
                "below 1 the rank waited (the communication thread counts too, so > 1 is possible)")
    else:
        note = ("solid: process CPU / (wall × compute threads); dashed: time in the calls advancing the buckets / their "
                "time in flight (progress mode; no communication thread); below 1 the rank waited")
    fig, (ax,) = style.new_figure("Process CPU / (wall × threads)", _caption(trace, note), simulated=trace.simulated)
    for rank, part in table.groupby("rank"):
        part = part.assign(x=part["case"].map(order)).sort_values("x")
        ax.plot(part["x"], part["cpu_wall"], "o-", color=style.colour(int(rank)), label=f"rank {rank}")
        if part["comm_cpu_wall"].notna().any():
            ax.plot(part["x"], part["comm_cpu_wall"], "s--", color=style.colour(int(rank)), alpha=0.8)
    ax.axhline(1.0, color="black", lw=0.8, ls=":", label="1 = threads busy")
    _case_ticks(ax, list(cases["label"]))
    ax.set_ylabel("CPU time / wall time (ratio)")
    top = np.nanmax(table[["cpu_wall", "comm_cpu_wall"]].to_numpy(float)) if len(table) else 1.0
    ax.set_ylim(0, max(1.25, float(top) * 1.1) if np.isfinite(top) else 1.25)
    style.legend_outside(ax)
    return fig


# --- scaling groups ----------------------------------------------------------------------------

def _group_caption(group: ScalingGroup) -> str:
    cpus = sorted({t.cpu_identity for t in group.traces})
    simulated = sum(t.simulated for t in group.traces)
    status = (f"{style.status_text(True)} data in {simulated} of {len(group.traces)} traces" if simulated
              else "measured data")
    cases = "; ".join(f"{p}: {c}" for p, c in zip(group.table["point"], group.table["case"]))
    return f"{'; '.join(cpus)} · {group.label} · {len(group.traces)} traces · {status} · case per point: {cases}"


def _families(table) -> list[tuple]:
    return sorted(set(zip(table["tasks_per_node"], table["cpus_per_task"])))


def _family_label(fam, table) -> str:
    return f"{fam[0]:g}/node" + (f" ×{fam[1]} cpu" if table["cpus_per_task"].nunique() > 1 else "")


def _by_family(ax, table, value: str, colour: str, scale: float = 1.0) -> None:
    """``value`` vs ranks, one line per tasks-per-node family, min–max bars from ``value_min``/``_max``."""
    for j, fam in enumerate(_families(table)):
        rows = table[(table["tasks_per_node"] == fam[0]) & (table["cpus_per_task"] == fam[1])].sort_values("ranks")
        err = [(rows[value] - rows[f"{value}_min"]) * scale, (rows[f"{value}_max"] - rows[value]) * scale]
        ax.errorbar(rows["ranks"], rows[value] * scale, yerr=err, color=colour, capsize=2, lw=0.9, elinewidth=0.7,
                    label=f"measured, {_family_label(fam, table)}", **style.layout_style(j))


def _ranks_axis(ax, ranks) -> None:
    ax.set_xticks(sorted(set(ranks)))
    ax.set_xlabel("ranks (nodes × tasks per node)")


@style.styled
def scaling_figure(group: ScalingGroup) -> Figure:
    """Strong: speedup and efficiency vs ranks; weak: efficiency and time per iteration vs ranks."""
    tab = group.table
    p0 = float(tab["ranks"].iloc[0])
    ranks = np.array(sorted(set(tab["ranks"])), dtype=float)
    title = "Strong scaling" if group.scaling == "strong" else "Weak scaling"
    fig, (left, right) = style.new_figure(title, _group_caption(group) + "; bars: min–max over passes", panels=2,
                                          simulated=any(t.simulated for t in group.traces))
    if group.scaling == "strong":
        left.plot(ranks, ranks / p0, "k--", lw=0.9, label=f"ideal p/{p0:g}")
        _by_family(left, tab, "speedup", style.colour(0))
        left.set_ylabel(f"speedup over {p0:g} rank(s)")
        eff_ax = right
    else:
        _by_family(right, tab, "iteration_s", style.colour(0), 1e3)
        right.axhline(tab["iteration_s"].iloc[0] * 1e3, color="black", ls="--", lw=0.9, label="ideal: constant")
        right.set_ylabel("time per iteration (ms)")
        eff_ax = left
    eff_ax.axhline(100, color="black", ls="--", lw=0.9, label="ideal 100 %")
    _by_family(eff_ax, tab, "efficiency", style.colour(3), 100)
    eff_ax.set_ylabel("parallel efficiency (%)")
    eff_ax.set_ylim(0, max(110, float(np.nanmax(tab["efficiency_max"] * 100)) * 1.1))
    for ax in (left, right):
        ax.set_ylim(bottom=0)
        _ranks_axis(ax, ranks)
        style.legend_outside(ax)
    return fig


@style.styled
def point_breakdown_figure(group: ScalingGroup) -> Figure:
    """Stacked bars per point: the chosen case's breakdown (medians over passes)."""
    table = group.table
    fig, (ax,) = style.new_figure("Step time breakdown per point", _group_caption(group) + "; medians over passes",
                                  simulated=any(t.simulated for t in group.traces), width=style.DOUBLE_WIDTH_IN)
    x = np.arange(len(table))
    _stacked_bars(ax, x, table, group.components)
    ax.set_xticks(x)
    ax.set_xticklabels([f"{p}\n{r} rank{'s' if r != 1 else ''}" for p, r in zip(table["point"], table["ranks"])])
    ax.set_xlabel("point: nodes × tasks per node × cpus per task")
    style.legend_outside(ax)
    return fig
