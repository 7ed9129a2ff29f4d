"""Figure style shared by every figure: size, fonts, title and caption, legend, watermark, saving.

Figures are meant to go into a paper as they are: a single-panel figure is 3.5 in wide (one
column), a multi-panel one 7 in (two columns), and no text is smaller than 7 pt at that size.
Each figure has a short title above the axes and one caption line (wrapped if long) below them
with the metadata a reader needs: machine/CPU, ranks and nodes, whether the data is measured,
and the source. Legends sit outside the axes so they never hide data.

Figures are ``matplotlib.figure.Figure`` objects on an explicit Agg canvas, never pyplot, so
nothing here touches matplotlib's global figure registry or backend. Functions that build a
figure are wrapped in :func:`styled`, which applies :data:`RC` while they run (artists read the
rc settings when they are created); :func:`save_figure` applies it again while drawing.

**Deterministic files.** :func:`save_figure` lays the figure out once and then freezes the layout
and the ticks (constrained layout otherwise moves things by a few 1e-5 pt on every save, and the
SVG's 72-dpi pass could pick other ticks than the PNG's), writes the SVG
without a date and with a fixed ``svg.hashsalt`` (the ids of clip paths and glyphs), and writes
each file under a temporary name first, so regenerating a figure from the same traces gives
byte-identical files and a reader never sees a half-written one.

**Modelled data.** A figure built from any trace whose root attribute ``simulated`` is not 0 gets
the prefix SIMULATED/MODELLED in its title and a watermark across every axes.
"""
from __future__ import annotations

import functools
import math
import os
import textwrap
from pathlib import Path

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator

from .trace import Trace

SIMULATED_LABEL = "SIMULATED/MODELLED"
SINGLE_WIDTH_IN = 3.5  # one column of a two-column paper
DOUBLE_WIDTH_IN = 7.0  # the full text width
PANEL_HEIGHT_IN = 2.3  # height of one row of axes (plus title and caption)
SMALLEST_PT = 7
CAPTION_PT = 7
DPI = 200  # PNG resolution: 700 × ~550 px for a single-column figure
FORMATS = ("png", "svg")
RC = {
    "font.size": SMALLEST_PT, "axes.titlesize": 8, "axes.labelsize": 7.5, "xtick.labelsize": SMALLEST_PT,
    "ytick.labelsize": SMALLEST_PT, "legend.fontsize": SMALLEST_PT, "legend.title_fontsize": SMALLEST_PT,
    "figure.titlesize": 9, "figure.titleweight": "bold", "lines.markersize": 4, "lines.linewidth": 1.2,
    "axes.linewidth": 0.6, "grid.linewidth": 0.4, "grid.alpha": 0.35, "legend.frameon": False,
    "svg.hashsalt": "scaleprobe", "svg.fonttype": "path", "path.simplify": False,
}
# Line styles and markers told apart in black and white: one per layout (tasks per node, ...).
STYLES = (("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1, 1, 1)), "v"), ((0, (1, 2)), "P"))
COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c",
           "#ccb974", "#64b5cd")


def styled(build):
    """Decorator: run a figure-building function with the package's rc settings."""
    @functools.wraps(build)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(RC):
            return build(*args, **kwargs)
    return wrapper


def status_text(simulated: bool) -> str:
    """'measured' or the SIMULATED/MODELLED label."""
    return SIMULATED_LABEL if simulated else "measured"


def trace_caption(trace: Trace, extra: str = "") -> str:
    """The caption of a one-trace figure: CPU, ranks on nodes, data status, source file (+ ``extra``)."""
    cpu = trace.cpu_identity
    nodes = len(trace.nodes)
    parts = [f"{cpu}", f"{trace.nranks} rank(s) on {nodes} node(s)", status_text(trace.simulated) + " data",
             f"source: {trace.path.name}"]
    return " · ".join(parts) + (f". {extra}" if extra else "")


def new_figure(title: str, caption: str, panels: int = 1, ncols: int | None = None, simulated: bool = False,
               width: float | None = None, row_height: float = PANEL_HEIGHT_IN, sharey: bool = False):
    """A figure with ``panels`` axes, a short title and a caption line below; returns (fig, axes list).

    One panel: 3.5 in wide; several: 7 in (``width`` overrides). ``ncols`` defaults to all panels
    in one row (at most 3 per row).
    """
    ncols = ncols or min(panels, 3)
    nrows = math.ceil(panels / ncols)
    width = width or (SINGLE_WIDTH_IN if panels == 1 else DOUBLE_WIDTH_IN)
    chars = int(width * 72 / (CAPTION_PT * 0.6))  # characters per caption line at 7 pt (DejaVu Sans, with room)
    caption = "\n".join(textwrap.wrap(caption, chars)) if caption else ""
    caption_in = (caption.count("\n") + 1) * CAPTION_PT * 1.3 / 72 + 0.06 if caption else 0.0
    height = nrows * row_height + 0.35 + caption_in
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    # Keep the caption's strip free: constrained layout places everything above it.
    fig.get_layout_engine().set(rect=(0, caption_in / height, 1, 1 - caption_in / height))
    grid = fig.subplots(nrows, ncols, squeeze=False, sharey=sharey)
    axes = [ax for row in grid for ax in row]
    for ax in axes[panels:]:
        ax.set_visible(False)
    axes = axes[:panels]
    fig.suptitle((f"{SIMULATED_LABEL}: " if simulated else "") + title)
    if caption:
        fig.text(0.01, 0.008, caption, ha="left", va="bottom", fontsize=CAPTION_PT, color="#333333")
    for ax in axes:
        ax.grid(True, which="major")
        if simulated:
            watermark(ax)
    return fig, axes


def watermark(ax) -> None:
    """SIMULATED/MODELLED across the axes, drawn above the data but translucent."""
    ax.text(0.5, 0.5, SIMULATED_LABEL, transform=ax.transAxes, ha="center", va="center", rotation=25,
            fontsize=16, color="red", alpha=0.25, zorder=10)


def legend_outside(ax, handles=None, labels=None, title: str | None = None, ncol: int = 1):
    """The legend to the right of ``ax``, outside the data area (constrained layout makes room)."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    return ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                     title=title, ncol=ncol, fontsize=SMALLEST_PT, handlelength=2.2)


def finish_from_zero(ax, ylabel: str):
    """The common end of a single-axes figure: its y label, the y axis from zero, the legend outside."""
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    legend_outside(ax)


def layout_style(k: int) -> dict:
    """Line style and marker of the k-th layout series (cycled)."""
    linestyle, marker = STYLES[k % len(STYLES)]
    return {"linestyle": linestyle, "marker": marker}


def colour(k: int) -> str:
    return COLOURS[k % len(COLOURS)]


def _wrap_wide_axis_labels(fig: Figure) -> bool:
    """Breaks an x label that runs off the figure's edge (a long label under axes narrowed by a legend
    outside them) into lines about its axes' width; True when one changed."""
    renderer = fig.canvas.get_renderer()
    changed = False
    for ax in fig.axes:
        label = ax.xaxis.label
        text = label.get_text()
        if not (ax.get_visible() and label.get_visible() and text):
            continue
        box, room = label.get_window_extent(renderer), ax.get_window_extent(renderer).width
        if (box.x0 < 0 or box.x1 > fig.bbox.x1) and box.width > room > 0:
            words = text.replace("\n", " ")
            wrapped = "\n".join(textwrap.wrap(words, max(12, int(len(words) * room / box.width))))
            if wrapped != text:
                label.set_text(wrapped)
                changed = True
    return changed


def save_figure(fig: Figure, out_dir: Path, stem: str) -> list[Path]:
    """Write ``<stem>.png`` and ``<stem>.svg`` into ``out_dir`` (deterministic, atomic); return the paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    with matplotlib.rc_context(RC):
        if fig.get_layout_engine() is not None:
            fig.set_dpi(DPI)  # text extents depend on the resolution (hinting): lay out at the PNG's ...
            # Two passes of the layout engine alone (the second settles what the first one's
            # resizing changed): it measures the artists with the canvas's renderer at this dpi,
            # as a full draw would, without drawing them (faster; the same bytes come out).
            for _ in range(2):
                fig.get_layout_engine().execute(fig)
            if _wrap_wide_axis_labels(fig):  # then lay out again around the labels' new lines
                for _ in range(2):
                    fig.get_layout_engine().execute(fig)
            # ... and keep that layout for both files: no layout engine at all (None, whatever the
            # rc says), as savefig draws the figure once more before printing whenever one is set,
            # even a placeholder ("none"); that draw changed nothing, and cost as much as the print.
            with matplotlib.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
                fig.set_layout_engine(None)
            for ax in fig.axes:  # ticks frozen too (the SVG's 72-dpi pass would choose other ones)
                for axis in (ax.xaxis, ax.yaxis):
                    axis.set_major_locator(FixedLocator(axis.get_majorticklocs()))
                    axis.set_minor_locator(FixedLocator(axis.get_minorticklocs()))
        for ext in FORMATS:
            path = out_dir / f"{stem}.{ext}"
            tmp = out_dir / f".{stem}.{ext}.tmp"
            fig.savefig(tmp, format=ext, dpi=DPI, metadata={"Date": None} if ext == "svg" else None)
            os.replace(tmp, path)
            paths.append(path)
    return paths
