"""A pipelined gpt_train run's report section and figure (scaleprobe_analysis/train_pipeline.py).

One real run: gpt-micro at depth 2 cut into 2 stages, GPipe over 3 micro-batches, 3 steps on 2
ranks (a few seconds). The C++ side (the ops' order, their times adding up): tests/mpi/test_pipeline.cpp.
"""
from __future__ import annotations

import pytest

from helpers import build_dir, need_binary, need_mpirun, run_mpi
from scaleprobe_analysis.plots import figures_for
from scaleprobe_analysis.trace import load_trace
from scaleprobe_analysis.train_pipeline import ideal_bubble, stage_table
from scaleprobe_analysis.train_report import report_tables

STAGES, MICRO_BATCHES, STEPS = 2, 3, 3


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    exe = build_dir() / "trainers" / "gpt" / "gpt_train"
    need_binary(exe)
    path = tmp_path_factory.mktemp("pipeline") / "gpipe.h5"
    run_mpi([need_mpirun(), "-np", str(STAGES), str(exe), "-m", "gpt-micro", "--depth", "2", "-s", str(STEPS),
             "--global-batch", "6", "--pipeline-stages", str(STAGES), "--micro-batches", str(MICRO_BATCHES),
             "--schedule", "gpipe", "--val-batches", "0", "--synthetic-bytes", "20000", "--threads", "1", "-q",
             "-o", str(path)], OMP_NUM_THREADS="1")
    return load_trace(path)


def test_ideal_bubble_is_the_closed_form():
    assert ideal_bubble(2, 3) == pytest.approx(0.25)
    assert ideal_bubble(4, 9) == pytest.approx(3 / 12)
    assert ideal_bubble(1, 5) == 0


def test_stage_table_is_the_median_over_the_later_steps(trace):
    table = stage_table(trace)
    assert table["stage"].tolist() == [0, 1]
    steps = trace.table("pipeline")
    later = steps[steps["step"] > steps["step"].min()]
    assert table["steps"].tolist() == [STEPS - 1, STEPS - 1]
    for stage in range(STAGES):
        mine = later[later["rank"] == stage]
        assert table.loc[stage, "bubble"] == pytest.approx(mine["bubble"].median())
        assert table.loc[stage, "schedule_s"] == pytest.approx(mine["schedule_s"].median())
    assert ((table["bubble"] >= 0) & (table["bubble"] < 1)).all()
    assert (table["compute_s"] <= table["schedule_s"]).all()
    assert table["ideal_bubble"].tolist() == pytest.approx([0.25, 0.25])


def test_report_and_figure_of_a_pipelined_run(trace):
    text = "\n".join(report_tables(trace))
    assert "#### Pipeline schedule (figure: pipeline)" in text
    assert "gpipe, 2 stages × 1 replica(s), 3 micro-batches of 2 rows" in text
    fig = figures_for(trace)["pipeline"]
    ax = fig.axes[0]
    # every forward and backward of the drawn step on each stage, its micro-batch written on it
    labels = sorted(t.get_text() for t in ax.texts)
    assert labels == sorted([str(m) for m in range(MICRO_BATCHES)] * 2 * STAGES)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["stage 0", "stage 1"]
    assert ax.get_xlabel() == "time from the step's start (ms)"
    caption = " ".join(t.get_text() for t in fig.texts)
    assert "measured" in caption and "median schedule time" in " ".join(caption.split())
