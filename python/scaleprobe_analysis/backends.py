"""Backends side by side: one configuration run on two or more communication backends (``--backend``;
jobs: ``submit-sweep --backend mpi,gloo``), compared point by point in one section.

**Grouping.** Points are grouped by what identifies a sweep except the backend: kind, program,
configuration (the command line without ``--backend`` and the run-specific paths), scaling and
launcher. A group whose points span two or more backends gets a section; within it, a point layout
(nodes × tasks per node × cpus per task) run on only one backend is left out (nothing to set
beside it).

**Values.** Each kind says what a case is and what is compared (its ``backend_cases``): allreduce:
per series at the smallest, a middle and the largest size, time per call (summary ``t_mean_us``)
and bus bandwidth; bucket_sweep: per (series, cap) the time per iteration; train: per case
(algorithm, bucket cap) the slowest rank's step time and exposed communication. Passes of a point
are combined as the median. ``<backend> ÷ <reference>`` = that backend's value over the
reference's (MPI where present, else the first backend): above 1 is slower (for times) or more
(for bandwidths). In an allreduce or bucket_sweep run the series ``mpi`` (MPI_Allreduce) runs on
every backend: its ratio is a control, how much the runs differ apart from the backend.

**Figure.** The first value per case, one bar per backend, at the layout with the most ranks.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from . import style
from .campaign import Point, Section, data_note, points_caption
from .kinds import module_for
from .textfmt import file_stem, markdown_table
from .trace import Trace


def backend_groups(points: list[Point]) -> list[list[Point]]:
    """Points grouped by their sweep without the backend; only groups spanning two or more backends."""
    groups: dict[tuple, list[Point]] = {}
    for p in points:
        groups.setdefault(p.id.sweep[:-1], []).append(p)
    return [g for g in groups.values() if len({p.id.backend for p in g}) > 1]


def reference_first(backends: set[str]) -> list[str]:
    """The backends, MPI first when present (the reference of the ratios), the rest sorted."""
    return sorted(backends, key=lambda b: (b != "mpi", b))


def side_by_side(group: list[Point]) -> tuple[pd.DataFrame, list[str], list[str], dict[str, str]]:
    """(wide table, backends, case keys, values): rows point × case, columns ``<value> <backend>`` and
    ``<value> <backend> ÷ <reference>``, for the layouts run on two or more backends."""
    module = module_for(group[0].id.kind)
    backends = reference_first({p.id.backend for p in group})
    parts, keys, values = [], [], {}
    for b in backends:
        cases = module.backend_cases([p for p in group if p.id.backend == b])
        keys, values = cases.keys, cases.values
        parts.append(cases.table.assign(backend=b))
    data = pd.concat(parts, ignore_index=True)
    index = ["point", "ranks", *keys]
    wide = data.pivot_table(index=index, columns="backend", values=list(values), sort=False).reset_index()
    out = wide[index].copy()
    out.columns = index
    for v in values:
        for b in backends:
            out[f"{v} {b}"] = wide[(v, b)].to_numpy() if (v, b) in wide.columns else np.nan
        for b in backends[1:]:
            out[f"{v} {b} ÷ {backends[0]}"] = out[f"{v} {b}"] / out[f"{v} {backends[0]}"]
    first = next(iter(values))
    present = out[[f"{first} {b}" for b in backends]].notna().sum(axis=1)
    on_two = set(out.loc[present > 1, "point"])  # layouts run on two or more backends
    return out[out["point"].isin(on_two)].reset_index(drop=True), backends, keys, values


@style.styled
def side_by_side_figure(table: pd.DataFrame, backends: list[str], keys: list[str], value: str, heading: str,
                        traces: list[Trace], caption: str) -> Figure:
    """Per case, one bar per backend: ``value`` at the layout with the most ranks."""
    point = table.loc[table["ranks"].idxmax(), "point"]
    part = table[table["point"] == point]
    labels = [" ".join(str(part[k].iloc[i]) for k in keys) for i in range(len(part))]
    fig, (ax,) = style.new_figure(f"Backends side by side at {point}", caption,
                                  simulated=any(t.simulated for t in traces), width=max(6.0, 0.45 * len(part) + 2))
    x = np.arange(len(part))
    width = 0.8 / len(backends)
    for k, b in enumerate(backends):
        ax.bar(x + (k - (len(backends) - 1) / 2) * width, part[f"{value} {b}"], width, color=style.colour(k), label=b)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=style.SMALLEST_PT)
    ax.set_yscale("log")  # sizes from bytes to megabytes: times span decades
    ax.set_ylabel(heading)
    style.legend_outside(ax)
    return fig


def group_section(group: list[Point]) -> Section | None:
    """The section of one group (module docstring); None when no layout ran on two backends."""
    table, backends, keys, values = side_by_side(group)
    if table.empty:
        return None
    traces = [t for p in group for t in p.traces]
    pid = group[0].id
    stem = file_stem(f"backends-{pid.bench}-{pid.scaling}-{pid.launcher}-{'-'.join(backends)}")
    first, heading = next(iter(values.items()))
    figs = {"side_by_side": side_by_side_figure(table, backends, keys, first, heading, traces, points_caption(group))}
    intro = [f"`{pid.config}` ({pid.scaling} scaling, launcher {pid.launcher}) on {', '.join(backends)}; "
             f"ratios against {backends[0]} (above 1: slower, or more bandwidth). Passes combined as the median; "
             "definitions: backends.py.", "", *data_note(traces)]
    tables = []
    for v, label in values.items():
        cols = ["point", "ranks", *keys] + [c for c in table.columns if c.startswith(f"{v} ")]
        view = table[cols].rename(columns={c: c[len(v) + 1:] for c in cols if c.startswith(f"{v} ")})
        tables += [f"#### {label} per backend", "", markdown_table(view), ""]
    return Section(f"{pid.bench}: backends side by side ({', '.join(backends)})", stem, intro, figs, tables)


def backend_sections(points: list[Point]) -> list[Section]:
    """One section per configuration run on two or more backends."""
    sections = []
    for group in backend_groups(points):
        if module_for(group[0].id.kind) is not None:
            section = group_section(group)
            if section is not None:
                sections.append(section)
    return sections
