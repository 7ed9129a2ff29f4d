"""Every figure, per trace and across points, as a paper would take it (style.py).

Checked after style.save_figure laid it out: 3.5 in wide (one panel) or 7 in, no text under
7 pt, legends outside every axes, the caption below the axes, nothing cut off at the edges, and
saving twice gives the same bytes.
"""
from __future__ import annotations

import matplotlib
import pytest
from matplotlib.text import Text

from scaleprobe_analysis.campaign import Options
from scaleprobe_analysis.campaign_status import scan_campaign
from scaleprobe_analysis.plots import campaign_sections, figures_for
from scaleprobe_analysis.style import RC, save_figure
from scaleprobe_analysis.trace import load_trace

TOLERANCE_PX = 1.5


def collected(allreduce_trace, bucket_trace, train_campaign, grid_campaign) -> dict:
    figs = {}
    for path in (allreduce_trace, bucket_trace, train_campaign / "strong" / "np3.h5"):
        figs.update({f"{path.stem}-{name}": fig for name, fig in figures_for(load_trace(path)).items()})
    for root in (train_campaign, grid_campaign.root):
        for section in campaign_sections(scan_campaign(root).campaign.traces, Options()):
            figs.update({f"{section.stem}-{name}": fig for name, fig in section.figures.items()})
    return figs


@pytest.fixture(scope="module")
def figures(allreduce_trace, bucket_trace, train_campaign, grid_campaign, tmp_path_factory):
    figs = collected(allreduce_trace, bucket_trace, train_campaign, grid_campaign)
    out = tmp_path_factory.mktemp("styled")
    files = {stem: [p.read_bytes() for p in save_figure(fig, out, stem)] for stem, fig in figs.items()}
    return figs, files, out


def test_every_kind_of_figure_is_covered(figures):
    figs, _, _ = figures
    names = {stem.rsplit("-", 1)[-1] for stem in figs}
    assert {"latency", "busbw", "contention", "imbalance", "bucket_sweep", "breakdown", "bucket_caps", "hidden",
            "latency_vs_ranks", "busbw_vs_ranks", "alphabeta_vs_ranks", "caps_by_point", "best_cap_vs_ranks",
            "scaling"} <= names


def test_size_fonts_legends_caption(figures):
    figs, _, _ = figures
    for stem, fig in figs.items():
        panels = [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]
        assert fig.get_figwidth() == (3.5 if len(panels) == 1 else 7.0) or fig.get_figwidth() == 7.0, stem
        with matplotlib.rc_context(RC):
            fig.canvas.draw()  # as the PNG was drawn (the SVG's draw left 72-dpi positions behind)
        renderer = fig.canvas.get_renderer()
        texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
        small = [(t.get_text(), t.get_fontsize()) for t in texts if t.get_fontsize() < 7]
        assert small == [], stem
        whole = fig.bbox
        drawn = [ax.get_tightbbox(renderer) for ax in panels]  # labels, drawn tick labels, title, legend
        drawn += [t.get_window_extent(renderer) for t in fig.texts]  # the title and the caption
        # The axis labels on their own: an axes' tight box leaves out a label wider than the axes
        # (a long x label under axes narrowed by a legend outside them).
        drawn += [a.label.get_window_extent(renderer) for ax in panels for a in (ax.xaxis, ax.yaxis)
                  if a.label.get_visible() and a.label.get_text()]
        for box in drawn:  # nothing cut off at the figure's edges
            assert box.x0 >= -TOLERANCE_PX and box.x1 <= whole.x1 + TOLERANCE_PX, (stem, box)
            assert box.y0 >= -TOLERANCE_PX and box.y1 <= whole.y1 + TOLERANCE_PX, (stem, box)
        for ax in panels:
            legend = ax.get_legend()
            if legend is not None:
                overlap = legend.get_window_extent(renderer).intersection(legend.get_window_extent(renderer),
                                                                           ax.get_window_extent(renderer))
                assert overlap is None or overlap.width * overlap.height < 1, f"{stem}: legend over the data"
        caption = [t for t in fig.texts if t is not fig._suptitle]  # suptitle() adds to fig.texts too
        assert caption and caption[0].get_text(), f"{stem}: no caption"
        lowest = min(ax.get_tightbbox(renderer).y0 for ax in panels)
        assert caption[0].get_window_extent(renderer).y1 <= lowest + TOLERANCE_PX, f"{stem}: caption not below the axes"
        assert fig._suptitle is not None and len(fig._suptitle.get_text()) <= 60, stem


def test_saving_again_gives_the_same_bytes(figures, tmp_path):
    figs, files, _ = figures
    for stem in sorted(figs)[:6]:
        assert [p.read_bytes() for p in save_figure(figs[stem], tmp_path, stem)] == files[stem]
    svg = files[sorted(files)[0]][1].decode()
    assert "<dc:date>" not in svg  # no date in the SVG metadata
