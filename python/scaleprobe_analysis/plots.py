"""Every figure of a campaign: each trace's (its kind's figures plus per-rank imbalance) and the
cross-point figures of each kind's sweeps, written as PNG and SVG (``style.save_figure``).

The figures themselves live with their kind (``allreduce.py``, ``bucket_sweep.py``,
``train_figures.py``) and in ``imbalance.py``; the style they share in ``style.py``.
"""
from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure

from . import imbalance, simulated_vs_measured
from .backends import backend_sections
from .campaign import Campaign, Options, Section, group_points, trace_stem
from .kinds import MODULES, module_for
from .style import save_figure
from .trace import Trace


def figures_for(trace: Trace) -> dict[str, Figure]:
    """Every figure of one trace by short name: its kind's, then the per-rank imbalance heat map."""
    module = module_for(trace.kind)
    if module is None:
        return {}
    return {**module.figures(trace), **imbalance.figures(trace)}


def campaign_sections(traces: list[Trace], options: Options) -> list[Section]:
    """The cross-point sections of every kind, kinds in registry order, then the backends side by side,
    then measured beside simulated allreduce points where both exist (``simulated_vs_measured.py``)."""
    points = group_points(traces)
    sections = []
    for kind, module in MODULES.items():
        mine = [p for p in points if p.id.kind == kind]
        if mine:
            sections += module.campaign_sections(mine, options)
    return sections + backend_sections(points) + simulated_vs_measured.sections(traces)


def plot_campaign(campaign: Campaign, out_dir: str | Path, case: str = "best") -> dict[tuple[str, str], list[Path]]:
    """Save every figure of every trace and of every cross-point section.

    Returns {(trace stem or section stem, figure name): [png, svg]}. ``case`` picks the train case
    the scaling figures use: 'best' (each trace's fastest) or 'ALGORITHM/CAP'.
    """
    out_dir = Path(out_dir)
    written = {}
    for trace in campaign.traces:
        stem = trace_stem(campaign.root, trace)
        for name, fig in figures_for(trace).items():
            written[(stem, name)] = save_figure(fig, out_dir, f"{stem}-{name}")
    for section in campaign_sections(campaign.traces, Options(case)):
        for name, fig in section.figures.items():
            written[(section.stem, name)] = save_figure(fig, out_dir, f"{section.stem}-{name}")
    return written
