"""Trainer traces (kind train, data-parallel engine): cases, breakdown, scaling, figures, refusal.

Real traces come from the ``train_campaign`` fixture (gpt_train at 1, 2, 3 ranks, strong and weak
scaling, caps tensor and 0.01, ``--overlap auto``: progress on this machine's one-core ranks); the
scaling arithmetic is also checked on constructed tables. The report and the overlap modes:
test_train_modes.py; the timeline: test_train_timeline.py.
"""
from __future__ import annotations

import dataclasses
import re
import shutil

import h5py
import numpy as np
import pandas as pd
import pytest

from helpers import TRAIN_CAPS, TRAIN_GLOBAL_BATCH, TRAIN_RANKS, TRAIN_RANK_BATCH, TRAIN_STEPS, edit_h5
from scaleprobe_analysis.cli import main
from scaleprobe_analysis.plots import figures_for
from scaleprobe_analysis.campaign import load_campaign
from scaleprobe_analysis.trace import load_trace
from scaleprobe_analysis.train_tables import (BREAKDOWN_SPLIT, breakdown_components, breakdown_table, cases_table,
                                              group_slug, scaling_groups, select_case, scaling_table,
                                              slowest_rank_steps, step_contention, summarised)

CASE_LABELS = [f"ring cap {c}" for c in TRAIN_CAPS]


# --- scaling arithmetic on constructed tables (known answers) -------------------------------

def test_strong_scaling_efficiency_is_t1_over_p_tp():
    table = scaling_table(pd.DataFrame({"ranks": [4, 1, 2], "iteration_s": [0.4, 1.0, 0.6]}), "strong")
    assert list(table["ranks"]) == [1, 2, 4]
    assert np.allclose(table["speedup"], [1.0, 1 / 0.6, 1 / 0.4])
    assert np.allclose(table["efficiency"], [1.0, 1.0 / (2 * 0.6), 1.0 / (4 * 0.4)])  # 1, 0.8333, 0.625
    assert np.allclose(table["ideal_speedup"], [1, 2, 4])


def test_strong_scaling_from_a_larger_baseline_and_repeats():
    table = scaling_table(pd.DataFrame({"ranks": [2, 4, 8], "iteration_s": [1.0, 0.6, 0.5]}), "strong")
    assert np.allclose(table["speedup"], [1.0, 1 / 0.6, 2.0])
    assert np.allclose(table["efficiency"], [1.0, 2 * 1.0 / (4 * 0.6), 2 * 1.0 / (8 * 0.5)])  # p0·t0 / (p·tp)
    repeats = scaling_table(pd.DataFrame({"ranks": [1, 1, 1, 2], "iteration_s": [1.0, 1.3, 1.1, 0.55]}), "strong")
    assert list(repeats["passes"]) == [3, 1]
    assert repeats["iteration_s"].iloc[0] == pytest.approx(1.1)  # the median of the passes, not their mean
    assert (repeats["iteration_s_min"].iloc[0], repeats["iteration_s_max"].iloc[0]) == (1.0, 1.3)
    assert repeats["spread"].iloc[0] == pytest.approx(0.3 / 1.1)
    assert repeats["speedup_max"].iloc[1] == pytest.approx(1.1 / 0.55)  # one pass at 2 ranks: no range
    assert repeats["efficiency"].iloc[1] == pytest.approx(1.1 / (2 * 0.55))  # exactly 1


def test_weak_scaling_efficiency_is_t1_over_tp():
    table = scaling_table(pd.DataFrame({"ranks": [1, 2, 3], "iteration_s": [1.0, 1.25, 2.0]}), "weak")
    assert np.allclose(table["efficiency"], [1.0, 0.8, 0.5])
    assert np.allclose(table["speedup"], [1.0, 1.6, 1.5])  # throughput ratio p·t1/tp
    with pytest.raises(ValueError):
        scaling_table(table, "sideways")


def test_slowest_rank_per_step_on_constructed_rows():
    it = pd.DataFrame({"rank": [0, 1, 0, 1], "case": [0, 0, 0, 0], "step": [3, 3, 4, 4],
                       "step_s": [1.0, 1.5, 2.0, 1.0], "data_s": [0.1, 0.2, 0.3, 0.4]})
    slow = slowest_rank_steps(it)
    assert list(slow["rank"]) == [1, 0] and list(slow["iteration_s"]) == [1.5, 2.0]
    assert list(slow["data_s"]) == [0.2, 0.3]  # the slowest rank's own phases


# --- real traces ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def campaign(train_campaign):
    return load_campaign(train_campaign)


def _trace(campaign, scaling, ranks):
    return next(t for t in campaign.traces if t.path.parent.name == scaling and t.nranks == ranks)


def test_cases_reproduce_the_engine_and_breakdown_sums_to_iteration_time(campaign):
    for trace in campaign.traces:
        cases = cases_table(trace).set_index("case")
        assert sorted(cases["label"]) == sorted(CASE_LABELS) and cases["best"].sum() == 1
        slow = slowest_rank_steps(summarised(trace))
        assert len(slow) == TRAIN_STEPS - len(TRAIN_CAPS)  # the first round of cases (incl. the verified step 1) is excluded
        mean_iter = slow.groupby("case")["iteration_s"].mean()
        assert np.allclose(mean_iter, cases.loc[mean_iter.index, "iteration_mean_s"], rtol=1e-9)
        bd = breakdown_table(trace).set_index("case")
        columns = [col for _, col in breakdown_components([trace])]
        parts = bd[columns].sum(axis=1)
        assert np.allclose(parts, bd["iteration_s"], rtol=1e-6, atol=1e-9)
        assert np.allclose(bd["iteration_s"], cases.loc[bd.index, "iteration_mean_s"], rtol=1e-9)
        assert (bd[columns] >= 0).all().all() and (bd["forward_s"] > 0).all()
        tokens = trace.attrs["tokens_per_step"]
        assert np.allclose(cases["tokens_per_s"], tokens / cases["iteration_mean_s"])


def test_scaling_tables(campaign):
    groups = {g.scaling: g for g in scaling_groups(campaign.traces)}
    assert set(groups) == {"strong", "weak"}
    for scaling, group in groups.items():
        tab = group.table
        assert list(tab["ranks"]) == list(TRAIN_RANKS) and list(tab["passes"]) == [1] * len(TRAIN_RANKS)
        assert list(tab["nodes"]) == [1] * len(TRAIN_RANKS) and list(tab["tasks_per_node"]) == list(TRAIN_RANKS)
        assert group.unit == "tokens" and "tokens_per_s" in tab
        times = [float(select_case(_trace(campaign, scaling, p))["iteration_mean_s"]) for p in TRAIN_RANKS]
        assert np.allclose(tab["iteration_s"], times)
        p = np.array(TRAIN_RANKS, dtype=float)
        expected = times[0] / (p * np.array(times)) if scaling == "strong" else times[0] / np.array(times)
        assert np.allclose(tab["efficiency"], expected)
        assert group.components == BREAKDOWN_SPLIT  # every trace has the overlap modes' columns
        parts = tab[[col for _, col in group.components]].sum(axis=1)
        assert np.allclose(parts, tab["iteration_s"], rtol=1e-6)
    assert "global batch 6" in groups["strong"].label and "batch 2 per rank" in groups["weak"].label
    assert all(t.attrs["global_batch"] == TRAIN_GLOBAL_BATCH for t in groups["strong"].traces)
    assert [t.attrs["global_batch"] for t in groups["weak"].traces] == [TRAIN_RANK_BATCH * p for p in TRAIN_RANKS]
    chosen = scaling_groups(campaign.traces, "ring/tensor")
    assert len(chosen) == 2 and all(set(g.table["case"]) == {"ring cap tensor"} for g in chosen)
    assert scaling_groups(campaign.traces, "mpi/tensor") == []  # no trace has that case


def test_scaling_groups_keep_backends_apart(train_campaign, tmp_path):
    # The weak-scaling runs copied and marked as run on Gloo: two series, not one with two passes per point.
    shutil.copytree(train_campaign / "weak", tmp_path / "weak")
    shutil.copytree(train_campaign / "weak", tmp_path / "weak_gloo")
    for trace in (tmp_path / "weak_gloo").glob("*.h5"):
        with edit_h5(trace) as f:
            f.attrs["backend"] = "gloo"
    groups = scaling_groups(load_campaign(tmp_path).traces)
    assert sorted(g.label.endswith(", backend gloo") for g in groups) == [False, True]
    assert all(list(g.table["passes"]) == [1] * len(TRAIN_RANKS) for g in groups)
    assert len({group_slug(g) for g in groups}) == 2


def test_samples_per_step_is_generic_over_images(campaign):
    trace = _trace(campaign, "strong", 2)
    attrs = {k: v for k, v in trace.attrs.items() if k != "tokens_per_step"}
    resnet = dataclasses.replace(trace, attrs={**attrs, "trainer": "resnet", "images_per_step": 6})
    cases = cases_table(resnet)
    assert "images_per_s" in cases and "tokens_per_s" not in cases
    assert np.allclose(cases["images_per_s"], 6 / cases["iteration_mean_s"])


def test_contention_and_figures_of_one_trace(campaign):
    trace = _trace(campaign, "strong", 3)
    cont = step_contention(trace)
    assert len(cont) == 3 * len(TRAIN_CAPS) and (cont["cpu_wall"] > 0).all() and np.isfinite(cont["cpu_wall"]).all()
    figs = figures_for(trace)
    assert set(figs) == {"breakdown", "bucket_caps", "hidden", "imbalance", "contention"}
    for name, fig in figs.items():
        ax = fig.axes[0]
        caption = " ".join(" ".join(t.get_text().split()) for t in fig.texts)
        assert "measured data" in caption and "3 rank(s)" in caption and "SIMULATED" not in fig._suptitle.get_text()
        assert (re.search(r"\(.+\)", ax.get_ylabel()) or name == "imbalance") and ax.get_xlabel(), "axis label without unit"
    caps = figs["bucket_caps"].axes[0]
    assert [t.get_text().split("\n")[0] for t in caps.get_xticklabels()] == list(TRAIN_CAPS)
    assert len([line for line in caps.get_lines() if line.get_marker() == "*"]) == 1  # best cap starred
    assert "1 = threads busy" in " ".join(t.get_text() for t in figs["contention"].axes[0].get_legend().get_texts())


def test_plot_cli_writes_png_and_svg(campaign, train_campaign, tmp_path, capsys):
    one = shutil.copyfile(train_campaign / "strong" / "np2.h5", tmp_path / "np2.h5")
    assert main(["plot", str(one), "-o", str(tmp_path / "figs")]) == 0
    written = sorted(capsys.readouterr().out.split())
    names = ("breakdown", "bucket_caps", "hidden", "imbalance", "contention")
    assert written == sorted(str(tmp_path / "figs" / f"np2-{n}.{ext}") for n in names for ext in ("png", "svg"))
    for path in written:
        data = open(path, "rb").read()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" if path.endswith(".png") else b"<svg" in data


def test_communication_split_and_hidden_fraction_from_the_raw_tables(campaign):
    """Per bucket: busy time = peers + transfer; per step the sums; per case hidden = 1 - exposed / the
    no-overlap reference measured in the run. The old `overlap` column is gone."""
    trace = _trace(campaign, "strong", 2)
    with h5py.File(trace.path, "r") as f:
        b = {k: f[f"buckets/{k}"][()] for k in ("rank", "step", "case", "ready_s", "start_s", "end_s", "peers_s",
                                                   "transfer_s", "queued_s")}
        it = {k: f[f"iterations/{k}"][()] for k in ("rank", "step", "case", "comm_s", "transfer_s", "peers_s",
                                                      "queued_s", "exposed_comm_s", "in_summary")}
        cases = {k: f[f"cases/{k}"][()] for k in ("case", "exposed_comm_mean_s", "reference_comm_s", "hidden_fraction",
                                                    "transfer_mean_s", "peers_mean_s")}
        assert "overlap" not in f["iterations"] and "overlap_mean" not in f["cases"]
        assert int(f.attrs["reference_iterations"]) > 0
    assert np.allclose(b["transfer_s"], b["end_s"] - b["start_s"] - b["peers_s"])
    assert np.allclose(b["queued_s"], b["start_s"] - b["ready_s"]) and (b["queued_s"] >= -1e-9).all()
    for r, s, c, transfer, peers, queued, comm in zip(it["rank"], it["step"], it["case"], it["transfer_s"],
                                                      it["peers_s"], it["queued_s"], it["comm_s"]):
        sel = (b["rank"] == r) & (b["step"] == s)
        assert transfer == pytest.approx(b["transfer_s"][sel].sum(), abs=1e-12)
        assert peers == pytest.approx(b["peers_s"][sel].sum(), abs=1e-12)
        assert queued == pytest.approx(b["queued_s"][sel].sum(), abs=1e-12)
        assert comm == pytest.approx(transfer + peers, rel=1e-9)
    for c, exposed, ref, hidden, transfer in zip(cases["case"], cases["exposed_comm_mean_s"], cases["reference_comm_s"],
                                                 cases["hidden_fraction"], cases["transfer_mean_s"]):
        keep = (it["case"] == c) & (it["in_summary"] == 1)
        assert exposed == pytest.approx(it["exposed_comm_s"][keep].mean(), rel=1e-9)
        assert transfer == pytest.approx(it["transfer_s"][keep].mean(), rel=1e-9)
        assert ref > 0 and hidden == pytest.approx(1 - exposed / ref, rel=1e-9)


def test_a_scaling_group_of_older_and_newer_traces(train_campaign, tmp_path):
    # weak/np1 made to look like a trace from before the overlap modes: the old components plus progress
    shutil.copytree(train_campaign / "weak", tmp_path / "weak")
    with edit_h5(tmp_path / "weak" / "np1.h5") as f:
        for column in ("progress_s", "exposed_wait_peers_s", "exposed_after_ready_s"):
            del f["iterations"][column]
        for attr in ("overlap_mode", "overlap_reason", "comm_cpu", "no_comm"):
            del f.attrs[attr]
    (group,) = scaling_groups(load_campaign(tmp_path).traces)
    assert [col for _, col in group.components] == ["data_s", "forward_s", "backward_s", "progress_s", "exposed_s",
                                                    "optimizer_s"]
    assert group.table["progress_s"].iloc[0] == 0 and group.table[["exposed_s", "forward_s"]].notna().all().all()


# --- damaged and older traces ------------------------------------------------------------

def _drop_last_row(group):
    """Cut a per-rank table short by one row, as a run that died while writing it might."""
    rows = int(group.attrs["rows"]) - 1
    for name in list(group):
        data, attrs = group[name][()], dict(group[name].attrs)
        del group[name]
        ds = group.create_dataset(name, data=data[:rows], fletcher32=rows > 0)  # as a version-2 writer would
        ds.attrs.update(attrs)
    group.attrs["rows"] = np.int64(rows)


@pytest.mark.parametrize("damage, problem", [
    ("incomplete", "incomplete trace (complete=0: the run did not finish writing it)"),
    ("no_buckets", "train trace without its 'buckets' table (corrupt or cut short)"),
    ("short_iterations", "train trace: the ranks recorded different steps in 'iterations' (rank 0: 8, rank 1: 7)"),
    ("no_column", "train trace: table 'iterations' lacks column(s) wait_s"),
    ("truncated", "corrupt: truncated"),
])


def test_damaged_train_trace_is_refused_in_one_line(train_campaign, tmp_path, damage, problem, capsys):
    bad = shutil.copyfile(train_campaign / "weak" / "np2.h5", tmp_path / "bad.h5")
    if damage == "truncated":
        data = bad.read_bytes()
        bad.write_bytes(data[: len(data) // 2])
    else:
        with edit_h5(bad) as f:
            if damage == "incomplete":
                f.attrs["complete"] = np.int64(0)
            elif damage == "no_buckets":
                del f["buckets"]
            elif damage == "short_iterations":
                _drop_last_row(f["iterations"])
            elif damage == "no_column":
                del f["iterations"]["wait_s"]
    for command in (["check", str(bad)], ["report", str(tmp_path), "-o", str(tmp_path / "out")]):
        assert main(command) == 1
        lines = capsys.readouterr().err.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"scaleprobe-analyze: error: {bad}: {problem}")
    assert not (tmp_path / "out" / "report.md").exists()


def test_older_train_trace_without_engine_tables_still_reports(tmp_path):
    from helpers import REPO
    old = REPO / "results" / "2026-11-22-gpt-tiny-vm" / "gpt-tiny-1thread.h5"
    assert old.exists(), f"{old}: the stored trace this test reads is missing from the checkout"
    trace = load_trace(old)
    assert "iterations" not in trace.tables and figures_for(trace) == {}
    camp = tmp_path / "old"
    camp.mkdir()
    shutil.copyfile(old, camp / "old.h5")
    assert main(["report", str(camp), "-o", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "report.md").read_text()
    assert "### Step-phase profile" in text and "### Cases" not in text and "## Scaling" not in text
