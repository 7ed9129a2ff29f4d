"""Per-rank imbalance: table from samples, heat-map figure, report section."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import NRANKS
from scaleprobe_analysis.imbalance import MAX_CASES, imbalance_figure, imbalance_table, rank_samples
from scaleprobe_analysis.samples import rank_means
from scaleprobe_analysis.trace import load_trace
from synthetic import write_allreduce_trace


def skewed_trace(path, ncases=2):
    """Case 0: rank 1 takes 1.2× rank 0's time; other cases balanced (constant samples)."""
    cases = [{"algorithm": "ring", "bytes": 1024 * (k + 1)} for k in range(ncases)]
    walls = [np.array([[10e-6] * 5, [12e-6] * 5])] + [np.full((2, 5), 10e-6 * (k + 1)) for k in range(1, ncases)]
    return load_trace(write_allreduce_trace(path, cases, walls))


def test_table_on_constructed_trace(tmp_path):
    table = imbalance_table(skewed_trace(tmp_path / "skew.h5")).set_index("case")
    assert table.loc[0, "slowest_rank"] == 1 and table.loc[0, "fastest_rank"] == 0
    assert table.loc[0, "mean_us"] == pytest.approx(11.0)
    assert table.loc[0, "imbalance_pct"] == pytest.approx(100 * (12 / 11 - 1))
    assert table.loc[1, "imbalance_pct"] == pytest.approx(0.0, abs=1e-9)
    assert table.loc[0, "label"] == "ring 1K"


@pytest.mark.parametrize("which", ["allreduce_trace", "bucket_trace"])
def test_table_agrees_with_the_binaries_summary(which, request):
    """Means from samples reproduce the C++ summary: t_mean, t_max (slowest), t_min, slowest_rank."""
    trace = load_trace(request.getfixturevalue(which))
    summary = trace.table("summary")
    table = imbalance_table(trace)
    assert list(table["case"]) == list(summary["case"])
    assert np.allclose(table["mean_us"], summary["t_mean_us"], rtol=1e-9)
    assert np.allclose(table["slowest_us"], summary["t_max_us"], rtol=1e-9)
    assert np.allclose(table["fastest_us"], summary["t_min_us"], rtol=1e-9)
    assert (table["imbalance_pct"] >= 0).all()
    means = rank_means(rank_samples(trace))
    assert len(means) == NRANKS * len(summary)
    assert np.allclose(means.groupby("case")["rel"].sum(), 0, atol=1e-12)


def test_figure_heat_map_marks_slowest_rank(tmp_path):
    trace = skewed_trace(tmp_path / "skew.h5")
    fig = imbalance_figure(trace)
    ax = fig.axes[0]
    grid = ax.images[0].get_array()
    assert grid.shape == (2, 2)  # ranks × cases
    assert grid[1, 0] == pytest.approx(100 * (12 / 11 - 1)) and grid[0, 0] == pytest.approx(100 * (10 / 11 - 1))
    boxes = [(p.get_x() + 0.5, p.get_y() + 0.5) for p in ax.patches]
    assert (0, 1) in boxes  # case column 0, rank row 1
    assert [t.get_text() for t in ax.get_xticklabels()] == ["ring 1K", "ring 2K"]
    assert fig._suptitle.get_text() == "SIMULATED/MODELLED: Per-rank imbalance"
    assert any(t.get_text() == "SIMULATED/MODELLED" for t in ax.texts)  # the watermark


def test_figure_shows_a_readable_subset(tmp_path):
    trace = skewed_trace(tmp_path / "many.h5", ncases=MAX_CASES + 8)
    fig = imbalance_figure(trace)
    assert fig.axes[0].images[0].get_array().shape == (2, MAX_CASES)
    caption = " ".join(" ".join(t.get_text().split()) for t in fig.texts)
    assert f"the {MAX_CASES} most imbalanced of {MAX_CASES + 8} cases shown" in caption
    assert fig.get_figwidth() == 7.0  # many cases: the full text width
    assert fig.axes[0].get_xticklabels()[0].get_text() == "ring 1K"  # the skewed case is kept
