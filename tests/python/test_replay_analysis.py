"""The replay kind (python/scaleprobe_analysis/replay.py) on the stored step_replay traces of
results/2026-11-28-vm-f6m207-step-replay: replays of one measured gpt-tiny run at 16, 64 and 256
simulated ranks make a campaign whose report has the cross-rank section, labelled SIMULATED, and
each trace's table; the package's per-step view agrees with the program's own medians. Expected
values are read from the raw HDF5 tables with h5py, not through the package."""
from __future__ import annotations

import shutil

import h5py
import numpy as np
import pytest

from helpers import REPO, report_section
from scaleprobe_analysis import replay
from scaleprobe_analysis.trace import load_trace

STORED = REPO / "results" / "2026-11-28-vm-f6m207-step-replay" / "sim"
RANKS = (16, 64, 256)


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    root = tmp_path_factory.mktemp("replay") / "c"
    root.mkdir()
    for n in RANKS:
        shutil.copy(STORED / f"scale-{n}.h5", root)
    return root


def test_report_has_the_cross_rank_section_labelled_simulated(campaign, tmp_path):
    out, text, rows = report_section(
        campaign, tmp_path, "## Step replay across simulated rank counts (SIMULATED)",
        "| case | ranks | measured_ranks | measured_ms | predicted_ms | predicted_wait_ms |")
    with h5py.File(campaign / "scale-256.h5") as f:
        cases = len(f["cases/case"])
        predicted = {(a.decode(), c.decode()): float(p) * 1e3 for a, c, p in
                     zip(f["cases/algorithm"], f["cases/bucket_cap"], f["cases/predicted_median_s"])}
    assert len(rows) == cases * len(RANKS)
    for (algorithm, cap), ms in predicted.items():
        row = next(r for r in rows if r["case"] == f"{algorithm} cap {cap}" and r["ranks"] == "256")
        assert float(row["predicted_ms"]) == pytest.approx(ms, rel=1e-3)
    assert "#### SIMULATED step replay (figure: replay_steps)" in text
    assert list((out / "figures").glob("*replay_by_ranks.png")) and list((out / "figures").glob("*replay_steps.png"))


def test_the_per_step_view_gives_the_programs_medians():
    trace = load_trace(STORED / "like-gpt2-progress-p1.h5")
    table = replay.case_table(trace)
    assert np.allclose(table["p50_us"], table["predicted_median_s"] * 1e6, rtol=1e-9)
    with h5py.File(STORED / "like-gpt2-progress-p1.h5") as f:
        ranks = len(np.unique(f["steps/rank"][()]))
    assert ranks == trace.nranks == 2
    assert set(replay.case_labels(trace)) == {"ring cap 1", "ring cap 25"}
