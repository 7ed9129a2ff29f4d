"""A pipelined gpt_train run's report section and figure (scaleprobe_analysis/train_pipeline.py), and
the section that sets it beside the same configuration run data-parallel (train_parallelism.py).

Two real runs of gpt-micro at depth 2 on 2 ranks, 3 steps, global batch 6 (a few seconds): cut into
2 stages with GPipe over 3 micro-batches, and data-parallel (and one rank, for the scaling series). The C++ side (the ops' order, their
times adding up, the loss curve against one rank): tests/mpi/test_pipeline.cpp.
"""
from __future__ import annotations

import pandas as pd
import pytest

from helpers import build_dir, need_binary, need_mpirun, run_mpi
from scaleprobe_analysis.campaign import Options, group_points
from scaleprobe_analysis.plots import campaign_sections, figures_for
from scaleprobe_analysis.trace import load_trace
from scaleprobe_analysis.train_parallelism import comparison_table, config_without_pipeline, groups
from scaleprobe_analysis.train_pipeline import free_message_replay, ideal_bubble, pipeline_bubble, stage_table
from scaleprobe_analysis.train_report import report_tables
from scaleprobe_analysis.train_tables import scaling_groups

STAGES, MICRO_BATCHES, STEPS = 2, 3, 3
PIPELINE = ["--pipeline-stages", str(STAGES), "--micro-batches", str(MICRO_BATCHES), "--schedule", "gpipe"]


def train(folder, name: str, *extra: str, ranks: int = STAGES):
    exe = build_dir() / "trainers" / "gpt" / "gpt_train"
    need_binary(exe)
    path = folder / f"{name}.h5"
    run_mpi([need_mpirun(), "-np", str(ranks), str(exe), "-m", "gpt-micro", "--depth", "2", "-s", str(STEPS),
             "--global-batch", "6", *extra, "--val-batches", "0", "--synthetic-bytes", "20000", "--threads", "1",
             "-q", "-o", str(path)], OMP_NUM_THREADS="1")
    return load_trace(path)


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return train(tmp_path_factory.mktemp("pipeline"), "gpipe", *PIPELINE)


@pytest.fixture(scope="module")
def data_parallel_trace(tmp_path_factory):
    return train(tmp_path_factory.mktemp("data_parallel"), "dp")


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
    assert ((table["bubble_free_messages"] >= 0) & (table["bubble_free_messages"] < 1)).all()
    # Replayed, no op starts later than it did (the first stage starts first and ends last), so the
    # whole pipeline's bubble with free messages is at most the measured one.
    whole = pipeline_bubble(trace)
    assert 0 < whole["free_messages"] <= whole["measured"] < 1
    assert whole["closed_form"] == pytest.approx(0.25)


def ops_of(order: dict[int, list[str]], forward: float, backward: float) -> pd.DataFrame:
    """pipeline_ops rows of one step: per stage its ops in order ("f0", "b1", ...), started 1 s apart."""
    rows = [{"stage": s, "pass": "forward" if op[0] == "f" else "backward", "micro": int(op[1:]), "start_s": float(i),
             "compute_s": forward if op[0] == "f" else backward} for s, ops in order.items() for i, op in enumerate(ops)]
    return pd.DataFrame(rows)


def test_free_message_replay_gives_balanced_stages_the_closed_form():
    # GPipe, 2 stages, 2 micro-batches, forward 1 s, backward 2 s: stage 1 runs f0 1-2, f1 2-3, b0 3-5,
    # b1 5-7; stage 0 f0 0-1, f1 1-2, then waits: b0 5-7, b1 7-9. Stage 0's bubble 3 / 9 = (S-1)/(M+S-1).
    gpipe = {0: ["f0", "f1", "b0", "b1"], 1: ["f0", "f1", "b0", "b1"]}
    assert free_message_replay(ops_of(gpipe, 1.0, 2.0), 2) == [(9.0, 6.0), (7.0, 6.0)]
    # 1F1B, 3 stages, 3 micro-batches: the first stage's bubble is the closed form, 2 / 5.
    one_f_one_b = {0: ["f0", "f1", "f2", "b0", "b1", "b2"], 1: ["f0", "f1", "b0", "f2", "b1", "b2"],
                   2: ["f0", "b0", "f1", "b1", "f2", "b2"]}
    (schedule, compute), *_ = free_message_replay(ops_of(one_f_one_b, 1.0, 1.0), 3)
    assert 1 - compute / schedule == pytest.approx(ideal_bubble(3, 3))


def test_free_message_replay_refuses_an_order_no_stage_could_run():
    with pytest.raises(ValueError, match="wait on each other"):
        free_message_replay(ops_of({0: ["b0", "f0"], 1: ["f0", "b0"]}, 1.0, 1.0), 2)


def test_report_and_figure_of_a_pipelined_run(trace):
    text = "\n".join(report_tables(trace))
    assert "#### Pipeline schedule (figure: pipeline)" in text
    assert "gpipe, 2 stages × 1 replica(s), 3 micro-batches of 2 rows" in text
    assert "with free messages, closed form 0.250." in text
    fig = figures_for(trace)["pipeline"]
    ax = fig.axes[0]
    # every forward and backward of the drawn step on each stage, its micro-batch written on it
    labels = sorted(t.get_text() for t in ax.texts)
    assert labels == sorted([str(m) for m in range(MICRO_BATCHES)] * 2 * STAGES)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["stage 0", "stage 1"]
    assert ax.get_xlabel() == "time from the step's start (ms)"
    caption = " ".join(t.get_text() for t in fig.texts)
    assert "measured" in caption and "median schedule time" in " ".join(caption.split())


def test_pipeline_options_are_taken_out_of_the_configuration():
    assert config_without_pipeline("gpt_train -m gpt-micro --pipeline-stages 2 --micro-batches=3 --schedule gpipe "
                                   "-s 3") == "gpt_train -m gpt-micro -s 3"


def test_data_parallel_and_pipelined_points_side_by_side(trace, data_parallel_trace):
    points = group_points([trace, data_parallel_trace])
    (group,) = groups(points)
    table = comparison_table(group)
    assert table["split"].tolist() == ["data parallel ×2", f"pipeline {STAGES}, gpipe, M={MICRO_BATCHES}"]
    assert table["vs_dp"].iloc[0] == pytest.approx(1.0)
    assert table["vs_dp"].iloc[1] == pytest.approx(table["step_ms"].iloc[0] / table["step_ms"].iloc[1])
    assert table["loss_vs_dp"].max() < 1e-5  # the same rows, the same model: the same loss
    assert table["ideal_bubble"].iloc[1] == pytest.approx(0.25) and table["bubble"].isna().iloc[0]
    held = trace.table("pipeline")["activation_bytes"].max()
    assert table["activations_MiB"].iloc[1] == pytest.approx(held / 2**20) and held > 0
    (section,) = [s for s in campaign_sections([trace, data_parallel_trace], Options())
                  if s.title.startswith("training parallelism")]
    assert section.title == "training parallelism: 2 ranks" and list(section.figures) == ["parallelism"]
    bars = section.figures["parallelism"].axes[0].patches
    assert [b.get_width() for b in bars] == pytest.approx(table["step_ms"].tolist())


def test_one_split_alone_is_no_comparison(trace):
    assert groups(group_points([trace])) == []


def test_a_scaling_series_keeps_to_one_pipeline_shape(trace, data_parallel_trace, tmp_path):
    # One rank and 2 data-parallel ranks are a series; the 2-stage pipeline at 2 ranks is not in it.
    one_rank = train(tmp_path, "one_rank", ranks=1)
    (series,) = scaling_groups([one_rank, data_parallel_trace, trace])
    assert sorted(str(t.path) for t in series.traces) == sorted([str(one_rank.path), str(data_parallel_trace.path)])
    assert "pipeline" not in series.label
