"""Figures and report.md from real traces; SIMULATED/MODELLED labelling of modelled data."""
from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from helpers import ALLREDUCE_ALGORITHMS, BUCKET_ALGORITHMS, NRANKS, edit_h5
from scaleprobe_analysis.campaign import load_campaign
from scaleprobe_analysis.campaign_status import scan_campaign
from scaleprobe_analysis.plots import figures_for, plot_campaign
from scaleprobe_analysis.report import write_report
from scaleprobe_analysis.trace import load_trace


@pytest.fixture(scope="module")
def report(campaign_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    return write_report(scan_campaign(campaign_dir), out)


def _title(fig):
    return fig._suptitle.get_text()


def _caption(fig):
    """The caption line(s) below the axes: the figure-level texts."""
    return " ".join(" ".join(t.get_text().split()) for t in fig.texts)


def test_allreduce_figures(allreduce_trace):
    trace = load_trace(allreduce_trace)
    figs = figures_for(trace)
    assert set(figs) == {"latency", "busbw", "contention", "imbalance"}
    for name, fig in figs.items():
        ax = fig.axes[0]
        assert trace.provenance["cpu_model"] in _caption(fig) and f"{NRANKS} rank(s) on 1 node(s)" in _caption(fig)
        assert "measured data" in _caption(fig) and "SIMULATED" not in _title(fig) + _caption(fig)
        assert f"source: {allreduce_trace.name}" in _caption(fig)
        assert len(_title(fig)) < 40, "titles are short; the metadata goes in the caption"
        assert re.search(r"\(.+\)", ax.get_ylabel()) or name == "imbalance", "y axis label without unit"
        assert "message size (bytes" in ax.get_xlabel()
    latency = figs["latency"].axes[0]
    assert latency.get_xscale() == "log" and latency.get_yscale() == "log"
    legend = [t.get_text() for t in latency.get_legend().get_texts()]
    assert legend == [*ALLREDUCE_ALGORITHMS, "α–β fit"]
    fit_lines = [line for line in latency.get_lines() if line.get_linestyle() == "--"]
    assert len(fit_lines) == len(ALLREDUCE_ALGORITHMS)  # one fitted α–β line per algorithm
    busbw = figs["busbw"].axes[0]
    copy_bw = trace.memory_copy_GBps()
    flat = [line for line in busbw.get_lines() if np.allclose(line.get_ydata(), copy_bw)]
    assert flat, "memory copy bandwidth reference line missing"
    assert "GB/s" in busbw.get_ylabel()


def test_bucket_figure_marks_best_cap(bucket_trace):
    figs = figures_for(load_trace(bucket_trace))
    assert set(figs) == {"bucket_sweep", "contention", "imbalance"}
    ax = figs["bucket_sweep"].axes[0]
    stars = [line for line in ax.get_lines() if line.get_marker() == "*"]
    assert len(stars) == len(BUCKET_ALGORITHMS)
    assert "time per iteration" in ax.get_ylabel()
    assert [t.get_text().split("\n")[0] for t in ax.get_xticklabels()] == ["tensor", "1", "all"]


def test_plot_campaign_writes_png_and_svg(campaign_dir, tmp_path):
    written = plot_campaign(load_campaign(campaign_dir), tmp_path)
    assert set(written) == {("allreduce", "latency"), ("allreduce", "busbw"), ("allreduce", "contention"),
                            ("allreduce", "imbalance"), ("sweep_bucket_sweep", "bucket_sweep"),
                            ("sweep_bucket_sweep", "contention"), ("sweep_bucket_sweep", "imbalance")}
    for png, svg in written.values():
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "<svg" in svg.read_text()


def test_report_files_and_content(report, allreduce_trace):
    text = report.read_text()
    assert report.name == "report.md"
    assert text.index("## Campaign status") < text.index("## Per-trace details")
    images = re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)
    assert len(images) == 7
    for rel in images + re.findall(r"\[SVG\]\(([^)]+)\)", text):
        assert (report.parent / rel).stat().st_size > 0
    trace = load_trace(allreduce_trace)
    for field in ("mpi_library_version", "hosts", "git_revision", "load_average_start", "omp_max_threads"):
        assert trace.provenance[field] in text
    assert trace.provenance["command_line"] in text and trace.machine in text
    assert "**Data: measured** (root attribute `simulated` = 0)." in text
    assert "All 2 trace(s) hold measured data" in text and "SIMULATED" not in text
    assert "| series | stat | alpha_us | beta_us_per_byte | bandwidth_GBps |" in text
    assert "| algorithm | cap | buckets | t_mean_ms |" in text
    assert "cpu_wall" in text
    assert text.count("### Per-rank imbalance") == 2
    assert "| case | label | mean_us | slowest_rank | slowest_us | fastest_rank | fastest_us | imbalance_pct |" in text


def test_simulated_trace_is_labelled(allreduce_trace, tmp_path):
    camp = tmp_path / "camp"
    camp.mkdir()
    fake = shutil.copyfile(allreduce_trace, camp / "modelled.h5")
    with edit_h5(fake) as f:
        f.attrs["simulated"] = np.int64(1)
    trace = load_trace(fake)
    for fig in figures_for(trace).values():
        assert _title(fig).startswith("SIMULATED/MODELLED: ")
        assert any(t.get_text() == "SIMULATED/MODELLED" for t in fig.axes[0].texts)
    # The figures' labels are checked above on figures_for's figures: a text-only report here.
    text = write_report(scan_campaign(camp), tmp_path / "out", figures=False).read_text()
    assert "**Data: SIMULATED/MODELLED** (root attribute `simulated` = 1)" in text
    assert "SIMULATED/MODELLED data present** in 1 of 1" in text


def test_trace_figures_policy_and_no_stale_figures(campaign_dir, tmp_path):
    """Per-trace figures: drawn for small campaigns (auto), left out with 'none'; a rerun replaces
    the figures folder whole, so a figure of an earlier report does not linger."""
    scan = scan_campaign(campaign_dir)
    out = tmp_path / "rep"
    write_report(scan, out)
    stems = {p.name.split("-")[0] for p in (out / "figures").glob("*.png")}
    assert "allreduce" in stems  # the 2-trace campaign gets per-trace figures under 'auto'
    (out / "figures" / "stale.png").write_bytes(b"old")
    write_report(scan, out, trace_figures="none")
    assert not (out / "figures" / "stale.png").exists()
    assert not any(p.name.startswith("allreduce-") for p in (out / "figures").iterdir())
    assert "report --trace-figures all" in (out / "report.md").read_text()
    with pytest.raises(ValueError):
        write_report(scan, out, trace_figures="some")
