"""Measured beside SIMULATED allreduce points (python/scaleprobe_analysis/simulated_vs_measured.py).

Synthetic traces (synthetic.py) with constant per-rank times, so every p50 is known exactly:
two measured passes and one simulated trace of ring and tree at 4 ranks, plus a simulated-only
point (8 ranks) and a measured-only size that must not appear. The report gets the section,
labelled SIMULATED, with the relative error (simulated − measured) / measured at each measured
point; a folder of measured traces only gets no such section. On stored data: the 2-rank point of
results/2026-11-29-vm-f6m207-simulated-vs-vm-cluster gives the ratios its summarize.py wrote."""
from __future__ import annotations

import numpy as np
import pytest

from helpers import REPO, edit_h5, markdown_rows, report_text
from synthetic import write_allreduce_trace
from scaleprobe_analysis import simulated_vs_measured
from scaleprobe_analysis.trace import load_trace

ITERS = 3


def _trace(path, nranks, times_us, simulated):
    """An allreduce trace whose case (algorithm, bytes) takes times_us[(algorithm, bytes)] on every rank."""
    cases = [{"algorithm": a, "bytes": n} for a, n in times_us]
    walls = [np.full((nranks, ITERS), t * 1e-6) for t in times_us.values()]
    write_allreduce_trace(path, cases, walls)
    if not simulated:
        with edit_h5(path) as f:
            f.attrs["simulated"] = np.int64(0)
    return path


@pytest.fixture
def campaign(tmp_path):
    root = tmp_path / "c"
    root.mkdir()
    # measured passes: ring 1K 10 and 12 us (median 11), ring 1M 200 and 220 (210), tree 1K 8 and 8
    _trace(root / "measured-p1.h5", 4, {("ring", 1024): 10.0, ("ring", 1 << 20): 200.0, ("tree", 1024): 8.0,
                                          ("ring", 4096): 30.0}, simulated=False)
    _trace(root / "measured-p2.h5", 4, {("ring", 1024): 12.0, ("ring", 1 << 20): 220.0, ("tree", 1024): 8.0},
           simulated=False)
    _trace(root / "sim-4.h5", 4, {("ring", 1024): 9.9, ("ring", 1 << 20): 231.0, ("tree", 1024): 10.0},
           simulated=True)
    _trace(root / "sim-8.h5", 8, {("ring", 1024): 20.0}, simulated=True)  # no measured 8-rank point
    return root


def test_errors_at_the_measured_points(campaign):
    traces = [load_trace(p) for p in sorted(campaign.glob("*.h5"))]
    table = simulated_vs_measured.comparison_table(traces)
    got = {(r.algorithm, int(r.bytes), int(r.ranks)): (r.measured_us, r.simulated_us, r.error_pct,
                                                         r.measured_traces, r.simulated_traces)
           for r in table.itertuples()}
    assert set(got) == {("ring", 1024, 4), ("ring", 1 << 20, 4), ("tree", 1024, 4)}
    expected = {("ring", 1024, 4): (11.0, 9.9, -10.0, 2), ("ring", 1 << 20, 4): (210.0, 231.0, 10.0, 2),
                ("tree", 1024, 4): (8.0, 10.0, 25.0, 2)}
    for key, (measured, simulated, error, passes) in expected.items():
        m, s, e, nm, ns = got[key]
        assert m == pytest.approx(measured, rel=1e-9)
        assert s == pytest.approx(simulated, rel=1e-9)
        assert e == pytest.approx(error, rel=1e-9)
        assert (nm, ns) == (passes, 1)


def test_report_section_is_labelled_simulated(campaign, tmp_path):
    # The cross-point section is the subject: the four traces' own figures are not drawn.
    text = report_text(campaign, tmp_path / "report", "--trace-figures", "none")
    assert f"## {simulated_vs_measured.TITLE}" in text
    assert "SIMULATED beside measured" in text
    rows = markdown_rows(text, "| algorithm | ranks | dtype | op | placement | size |")
    errors = {(r["algorithm"], r["size"]): float(r["error_pct"]) for r in rows}
    assert errors == {("ring", "1K"): -10.0, ("ring", "1M"): 10.0, ("tree", "1K"): 25.0}
    assert "figures/measured-vs-simulated-allreduce-overlay.png" in text


def test_overlay_figure_says_simulated(campaign):
    traces = [load_trace(p) for p in sorted(campaign.glob("*.h5"))]
    (section,) = simulated_vs_measured.sections(traces)
    fig = section.figures["overlay"]
    assert fig._suptitle.get_text().startswith("SIMULATED/MODELLED: ")
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert "ring 4 ranks (simulated)" in labels and "ring 4 ranks (measured)" in labels


def test_no_section_without_both_kinds(campaign):
    measured = [load_trace(p) for p in sorted(campaign.glob("measured-*.h5"))]
    assert simulated_vs_measured.sections(measured) == []
    simulated = [load_trace(p) for p in sorted(campaign.glob("sim-*.h5"))]
    assert simulated_vs_measured.comparison_table(simulated).empty


STORED = REPO / "results" / "2026-11-29-vm-f6m207-simulated-vs-vm-cluster"


def test_stored_grid_gives_the_ratios_of_its_summary():
    """The stored 2-rank virtual-node point: its simulated trace and the three measured passes it was
    compared with (sim/intra links them) give summarize.py's simulated / measured, written independently."""
    paths = [STORED / "sim" / "allreduce_N1_t2.h5"] + sorted((STORED / "sim" / "intra").glob("allreduce_N1_t2_*.h5"))
    table = simulated_vs_measured.comparison_table([load_trace(p) for p in paths])
    rows = markdown_rows((STORED / "summary.md").read_text(), "| point | ranks | algorithm | bytes |")
    expected = {(r["algorithm"], int(r["bytes"])): float(r["simulated / measured"]) for r in rows
                if r["point"].startswith("N1 t2")}
    got = {(r.algorithm, int(r.bytes)): 1 + r.error_pct / 100 for r in table.itertuples()}
    assert len(expected) == 15 and set(got) == set(expected)
    for key, ratio in expected.items():
        assert got[key] == pytest.approx(ratio, abs=6e-4), key
    assert set(table["measured_traces"]) == {3} and set(table["simulated_traces"]) == {1}
