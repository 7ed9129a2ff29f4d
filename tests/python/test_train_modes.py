"""Trainer traces in the report, and the overlap modes: progress (train_campaign), none, --no-comm, --shard.

``train_campaign`` (conftest.py: gpt_train at 1, 2, 3 ranks, strong and weak scaling, ``--overlap
auto``: progress on this machine's one-core ranks) is reported once per module (``report``);
``mode_traces`` are 2-rank runs with ``--overlap none``, ``--no-comm`` and ``--shard gradients``.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from helpers import TRAIN_RANKS, TRAIN_RANK_BATCH, build_dir, need_binary, need_mpirun, run_cli, run_mpi
from scaleprobe_analysis import train
from scaleprobe_analysis.cli import main
from scaleprobe_analysis.campaign import load_campaign
from scaleprobe_analysis.trace import load_trace
from scaleprobe_analysis.train_figures import breakdown_figure
from scaleprobe_analysis.train_tables import (BREAKDOWN_SPLIT, breakdown_components, breakdown_table, scaling_groups,
                                              scaling_key)
from test_train_timeline import check_train_timeline, timeline_tracks


@pytest.fixture(scope="module")
def campaign(train_campaign):
    return load_campaign(train_campaign)


# --- the report's train and scaling sections --------------------------------------------

@pytest.fixture(scope="module")
def report(train_campaign, tmp_path_factory):
    out = tmp_path_factory.mktemp("train_report")
    proc = run_cli("report", str(train_campaign), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    return out / "report.md"


def test_report_has_the_train_and_scaling_sections(report, campaign):
    text = report.read_text()
    assert text.count("\n## trainer scaling: ") == 2
    assert "## trainer scaling: gpt gpt-micro, strong scaling, global batch 6, seq 16" in text
    assert "## trainer scaling: gpt gpt-micro, weak scaling, batch 2 per rank, seq 16" in text
    assert text.index("## trainer scaling: ") < text.index("## Per-trace details")
    header = ("| point | ranks | passes | case | iteration_ms | iteration_ms_min | iteration_ms_max | spread | speedup | "
              "ideal_speedup | efficiency | tokens_per_s |")
    assert text.count(header) == 2
    assert text.count("### Cases (algorithm × bucket cap)") == 6
    assert text.count("### Per-iteration latency breakdown (figure: breakdown)") == 6
    assert text.count("### Bucket cap sweep (figures: bucket_caps, hidden)") == 6
    assert text.count("### Per-rank imbalance (figure: imbalance)") == 4  # the 2- and 3-rank traces
    assert "### Step-phase profile" in text
    images = re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)
    for name in ("scaling-gpt-gpt-micro-strong-gb6-seq16-scaling", "scaling-gpt-gpt-micro-strong-gb6-seq16-breakdown",
                 "scaling-gpt-gpt-micro-weak-rb2-seq16-scaling", "strong_np3-breakdown", "strong_np3-bucket_caps",
                 "strong_np3-hidden", "weak_np2-imbalance", "weak_np1-contention"):
        assert f"figures/{name}.png" in images
    for rel in images + re.findall(r"\[SVG\]\(([^)]+)\)", text):
        assert (report.parent / rel).stat().st_size > 0
    # the strong table's efficiency column is t1 / (p tp) of the traces' best cases
    strong = next(g for g in scaling_groups(campaign.traces) if g.scaling == "strong")
    rows = text.split(header)[1].split("\n\n")[0].strip().splitlines()[1:]
    column = header.split("|").index(" efficiency ")
    effs = [float(r.split("|")[column]) for r in rows]
    assert np.allclose(effs, strong.table["efficiency"], rtol=1e-3)


def _sections(text: str) -> dict[str, str]:
    """The report's per-trace sections by trace stem ('strong_np1', ...)."""
    parts = re.split(r"\n### (\S+): train \(gpt_train\)\n", text)
    return dict(zip(parts[1::2], parts[2::2]))


def test_report_states_the_mode_and_the_split(report, campaign):
    sections = _sections(report.read_text())
    assert sorted(sections) == sorted(f"{s}_np{p}" for s in ("strong", "weak") for p in TRAIN_RANKS)
    for trace in campaign.traces:
        text = sections[f"{trace.path.parent.name}_np{trace.nranks}"]
        a = trace.attrs
        assert f"Communication: overlap mode **{a['overlap_mode']}**" in text
        assert f"(`overlap_reason`: {a['overlap_reason']})" in text
        header = next(line for line in text.splitlines() if line.startswith("| label | buckets | steps |"))
        assert "| progress_mean_ms | exposed_comm_mean_ms | exposed_wait_peers_mean_ms | exposed_after_ready_mean_ms |" \
            in header
        assert "| progress_ms | exposed_wait_peers_ms | after_ready_ms (wait+average−wait_peers) | optimizer_ms |" in text
        if trace.nranks == 1:  # nothing to hide: no hidden fraction, said so
            assert "hidden_fraction" not in header and "One rank: nothing to hide, hidden fraction n/a." in text
            assert "#### Bucket cap sweep" in text and "hidden_fraction |" not in text
        else:
            assert header.endswith("| hidden_fraction | compute_imbalance | slowest_rank | samples_per_s | tokens_per_s | best |")


# --- overlap modes: progress (train_campaign), none, --no-comm and --shard (mode_traces) ---------

@pytest.fixture(scope="module")
def mode_traces(tmp_path_factory) -> dict:
    """2-rank gpt_train runs with ``--overlap none``, ``--no-comm`` and ``--shard gradients`` (one cap, a bucket
    per tensor)."""
    exe = build_dir() / "trainers" / "gpt" / "gpt_train"
    need_binary(exe)
    mpirun = need_mpirun()
    root = tmp_path_factory.mktemp("modes")
    common = [mpirun, "-np", "2", str(exe), "-m", "gpt-micro", "-s", "6", "-B", str(TRAIN_RANK_BATCH), "-a", "ring",
              "--bucket-cap-mb", "tensor", "--val-batches", "0", "--synthetic-bytes", "20000", "--threads", "1", "-q"]
    paths = {"none": root / "none.h5", "no_comm": root / "no_comm.h5", "shard": root / "shard.h5"}
    run_mpi([*common, "--overlap", "none", "-o", str(paths["none"])], OMP_NUM_THREADS="1")
    run_mpi([*common, "--no-comm", "-o", str(paths["no_comm"])], OMP_NUM_THREADS="1")
    run_mpi([*common, "--shard", "gradients", "-o", str(paths["shard"])], OMP_NUM_THREADS="1")
    return paths


def test_split_breakdown_adds_up_in_every_mode(campaign, mode_traces):
    """step = data + forward + backward + progress + wait + optimizer + all-gather + average on every rank and
    step; the breakdown's split components add up to the iteration time (the all-gather of a sharded run in
    its exposed communication); progress only in progress mode."""
    traces = [*campaign.traces, *(load_trace(p) for p in mode_traces.values())]
    assert {t.attrs["overlap_mode"] for t in traces} >= {"progress", "none"}  # auto: progress at 1 rank
    for trace in traces:
        mode = trace.attrs["overlap_mode"]
        assert breakdown_components([trace]) == BREAKDOWN_SPLIT
        it = trace.table("iterations")
        phases = it[["data_s", "forward_s", "backward_s", "progress_s", "wait_s", "optimizer_s", "all_gather_s",
                     "average_s"]]
        assert (it["all_gather_s"] > 0).all() == (trace.attrs["shard"] != "none")
        assert np.allclose(phases.sum(axis=1), it["step_s"], rtol=1e-12, atol=1e-12)
        assert np.allclose(it["compute_s"], it["forward_s"] + it["backward_s"] + it["optimizer_s"], atol=1e-12)
        assert np.allclose(it["exposed_comm_s"], it["exposed_wait_peers_s"] + it["exposed_after_ready_s"], atol=1e-12)
        bd = breakdown_table(trace)
        columns = [col for _, col in BREAKDOWN_SPLIT]
        assert np.allclose(bd[columns].sum(axis=1), bd["iteration_s"], rtol=1e-12, atol=1e-12)
        assert np.allclose(bd["exposed_wait_peers_s"] + bd["after_ready_s"], bd["exposed_s"], atol=1e-12)
        assert (bd["after_ready_s"] > -1e-6).all() and (bd["exposed_wait_peers_s"] >= 0).all()
        samples, names = trace.table("samples"), list(trace.table("phases")["name"])
        assert names[8] == "progress"
        if mode == "progress":
            assert (bd["progress_s"] > 0).all() and (samples["phase"] == 8).any()
        else:
            assert (it["progress_s"] == 0).all() and not (samples["phase"] == 8).any()
        cases = trace.table("cases").set_index("case")
        keep = it[it["in_summary"] == 1].groupby("case")
        for column in ("exposed_wait_peers", "exposed_after_ready", "progress"):
            assert np.allclose(cases[f"{column}_mean_s"], keep[f"{column}_s"].mean().reindex(cases.index), rtol=1e-9)
        if trace.nranks == 1 or int(trace.attrs["no_comm"]):
            assert cases["hidden_fraction"].isna().all()
            assert (it["exposed_wait_peers_s"] == 0).all()


def test_sharded_run_says_so(mode_traces):
    trace = load_trace(mode_traces["shard"])
    text = "\n".join(train.report_tables(trace))
    assert "Sharded (`--shard gradients`): each bucket is a reduce-scatter" in text
    assert f"each rank holds at most {trace.attrs['shard_numel_max']} parameters' optimizer state" in text
    names = list(trace.table("phases")["name"])
    assert set(trace.table("samples")["phase"]) >= {names.index("reduce_scatter"), names.index("all_gather")}


def test_none_and_no_comm_runs(mode_traces, tmp_path, capsys):
    none, alone = load_trace(mode_traces["none"]), load_trace(mode_traces["no_comm"])
    assert (int(none.attrs["overlap"]), none.attrs["overlap_mode"], int(none.attrs["no_comm"])) == (0, "none", 0)
    assert int(alone.attrs["no_comm"]) == 1 and "buckets" not in alone.tables  # loads without its buckets table
    text = "\n".join(train.report_tables(none))
    assert "Communication: overlap mode **none** (`overlap_reason`: --overlap none)." in text
    assert "`comm_cpu_wall` n/a" in text and "exposed_wait_peers_mean_ms" in text
    check_train_timeline(mode_traces["none"], tmp_path, capsys)  # the allreduces on the main thread's lane

    text = "\n".join(train.report_tables(alone))
    assert "Communication: **no communication (--no-comm)**" in text
    assert "(No communication (--no-comm): no hidden fraction.)" in text
    header = next(line for line in text.splitlines() if line.startswith("| label | buckets | steps |"))
    assert "comm_mean_ms" not in header and "hidden_fraction" not in header
    out = tmp_path / "alone.json"
    assert main(["timeline", str(mode_traces["no_comm"]), "-o", str(out)]) == 0
    assert "main thread per rank (no bucket allreduces)" in capsys.readouterr().out
    events = json.loads(out.read_text())["traceEvents"]
    tracks, _ = timeline_tracks(events, 2)
    assert all(lanes == [] for _, lanes in tracks.values())
    assert {e["name"] for e in events if e["ph"] == "X"} == {"data", "forward", "backward", "optimizer"}
    key, other = scaling_key(alone), scaling_key(none)
    assert (key[-1], other[-1]) == (1, 0) and key[:-1] == other[:-1]  # the same run but --no-comm: its own series
    legend = breakdown_figure(alone).axes[0].get_legend()
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["data", "forward", "backward", "comm. in backward (progress)", "waiting for slowest peer",
                      "exposed comm. after all ready", "optimizer"]
