"""Trainer traces (kind train, data-parallel engine): scaling, breakdown, figures, report, timeline, refusal.

Real traces come from the ``train_campaign`` fixture (gpt_train at 1, 2, 3 ranks, strong and weak
scaling, caps tensor and 0.01, ``--overlap auto``: progress on this machine's one-core ranks) and
``mode_traces`` (2 ranks: ``--overlap none`` and ``--no-comm``); the scaling arithmetic is also
checked on constructed tables.
"""
from __future__ import annotations

import dataclasses
import json
import re
import shutil
from collections import defaultdict

import h5py
import numpy as np
import pandas as pd
import pytest

from helpers import (TRAIN_CAPS, TRAIN_GLOBAL_BATCH, TRAIN_RANKS, TRAIN_RANK_BATCH, TRAIN_STEPS, build_dir, edit_h5,
                     need_binary, need_mpirun, run_cli, run_mpi)
from scaleprobe_analysis import train, train_timeline
from scaleprobe_analysis.cli import main
from scaleprobe_analysis.plots import figures_for
from scaleprobe_analysis.campaign import load_campaign
from scaleprobe_analysis.trace import load_trace
from scaleprobe_analysis.train_figures import breakdown_figure
from scaleprobe_analysis.train_tables import (BREAKDOWN_SPLIT, breakdown_components, breakdown_table, cases_table,
                                              group_slug, scaling_groups, scaling_key, scaling_table, select_case,
                                              slowest_rank_steps, step_contention, summarised)

TOL_US = 1e-3  # the timeline JSON rounds ts/dur to 0.1 ns
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


def timeline_tracks(events, nranks):
    """{rank: (main tid, [bucket lane tids])} and every track's name, from the thread_name events."""
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    tracks = {}
    for rank in range(nranks):
        mine = sorted(t for t, n in names.items() if n.startswith(f"rank {rank} "))
        assert "main thread: step phases" in names[mine[0]]
        tracks[rank] = (mine[0], mine[1:])
    assert sorted(names) == list(range(len(names)))  # tids 0..n-1, rank by rank
    return tracks, names


def assert_properly_nested(complete):
    """No two complete events of one track overlap partially (viewers drop such events)."""
    by_tid = defaultdict(list)
    for e in complete:
        by_tid[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_tid.values():
        open_ends = []
        for start, end in sorted(spans, key=lambda x: (x[0], -x[1])):
            while open_ends and open_ends[-1] <= start + TOL_US:
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1] + TOL_US, "partially overlapping events on one track"
            open_ends.append(end)


def check_train_timeline(path, tmp_path, capsys):
    """Export one trainer trace's timeline and check its tracks, events, clocks and flows for the trace's mode."""
    trace = load_trace(path)
    mode, nranks = trace.attrs["overlap_mode"], trace.nranks
    out = tmp_path / "train.json"
    assert main(["timeline", str(path), "-o", str(out)]) == 0
    assert train.timeline_note(trace) in capsys.readouterr().out
    events = json.loads(out.read_text())["traceEvents"]
    tracks, names = timeline_tracks(events, nranks)
    lanes = {tid: rank for rank, (_, mine) in tracks.items() for tid in mine}
    for rank, (main_tid, mine) in tracks.items():
        assert 1 <= len(mine) <= (2 if mode == "progress" else 1)  # progress: up to 2 buckets in flight at once
        for tid in mine:
            if mode == "thread":
                assert "communication thread" in names[tid]
            else:  # progress: advanced from the main thread; none: run on it in the wait
                assert "main thread" in names[tid] and "communication thread" not in names[tid]
                assert ("advanced from the main thread" if mode == "progress" else "run on the main thread") in names[tid]
    buckets = trace.table("buckets")
    complete = [e for e in events if e["ph"] == "X"]
    comm = [e for e in complete if e["tid"] in lanes]
    phases = [e for e in complete if e["tid"] not in lanes]
    assert {e["name"] for e in phases} <= {"data", "forward", "backward", "progress", "wait", "optimizer", "all_gather", "average"}
    assert ("progress" in {e["name"] for e in phases}) == (mode == "progress")
    assert_properly_nested(complete)
    assert len(comm) == len(buckets)
    for rank in range(nranks):  # one event per bucket row of the rank, named per bucket, start <= end
        mine = [e for e in comm if lanes[e["tid"]] == rank]
        rows = buckets[buckets["rank"] == rank]
        assert len(mine) == len(rows)
        assert all(e["name"] == f"bucket {e['args']['bucket']}" and e["dur"] >= 0 for e in mine)
        assert all(e["args"]["start_s"] <= e["args"]["end_s"] for e in mine)
        assert {(e["args"]["step"], e["args"]["bucket"]) for e in mine} == set(zip(rows["step"], rows["bucket"]))
        own = {tracks[rank][0], *tracks[rank][1]}
        assert min(e["ts"] for e in complete + [e for e in events if e["ph"] == "i"]
                   if e["tid"] in own) == pytest.approx(0, abs=TOL_US)
    # bucket and backward events of a step share the rank's clock: offsets agree with the trace
    rank_of_main = {main_tid: rank for rank, (main_tid, _) in tracks.items()}
    backward = {(rank_of_main[e["tid"]], e["args"]["step"]): e for e in phases if e["name"] == "backward"}
    samples = trace.table("samples")
    bw_phase = list(trace.table("phases")["name"]).index("backward")
    bw_start = samples[samples["phase"] == bw_phase].set_index(["rank", "iteration"])["start_s"]
    for e in comm[:50]:
        key = (lanes[e["tid"]], e["args"]["step"])
        expected = (e["args"]["start_s"] - bw_start[key]) * 1e6
        assert e["ts"] - backward[key]["ts"] == pytest.approx(expected, abs=2 * TOL_US)
        assert e["dur"] == pytest.approx((e["args"]["end_s"] - e["args"]["start_s"]) * 1e6, abs=TOL_US)
    if mode == "progress":  # the step's progress sample drawn right after backward's own time
        progress = {(e["tid"], e["args"]["step"]): e for e in phases if e["name"] == "progress"}
        for (tid, step), p in progress.items():
            bw = next(e for e in phases if e["name"] == "backward" and e["tid"] == tid and e["args"]["step"] == step)
            assert p["ts"] == pytest.approx(bw["ts"] + bw["dur"], abs=2 * TOL_US)
    ready = [e for e in events if e["ph"] == "i"]
    assert len(ready) == len(buckets) and all(e["name"].endswith(" ready") for e in ready)
    flows = defaultdict(dict)
    for e in events:
        if e["ph"] in "sf" and len(e["ph"]) == 1:
            flows[e["id"]][e["ph"]] = e
    assert len(flows) == len(buckets)
    for pair in flows.values():  # from the main thread at readiness to the allreduce on its rank's bucket track
        rank = lanes[pair["f"]["tid"]]
        assert pair["s"]["tid"] == tracks[rank][0] and pair["s"]["ts"] <= pair["f"]["ts"] + TOL_US


def test_timeline_has_per_rank_bucket_events(train_campaign, tmp_path, capsys):
    check_train_timeline(train_campaign / "strong" / "np3.h5", tmp_path, capsys)


def test_timeline_cap_keeps_whole_steps_with_their_buckets(train_campaign, tmp_path, capsys):
    path = train_campaign / "strong" / "np2.h5"
    samples = load_trace(path).table("samples")
    per_step = samples.groupby("iteration").size()
    cap = int(per_step.iloc[:3].sum())  # exactly the first three steps fit
    out = tmp_path / "capped.json"
    assert main(["timeline", str(path), "-o", str(out), "--max-events", str(cap)]) == 0
    assert f"kept {cap} of {len(samples)} samples" in capsys.readouterr().err
    events = [e for e in json.loads(out.read_text())["traceEvents"] if e["ph"] == "X"]
    assert {e["args"]["step"] for e in events} == set(per_step.index[:3])
    assert len(events) == cap


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


# --- overlap modes: progress (train_campaign), none and --no-comm (mode_traces) --------------------

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


def test_buckets_in_flight_at_once_get_a_second_track(campaign):
    trace = _trace(campaign, "strong", 2)
    buckets = pd.DataFrame({"rank": [0, 0, 0, 0, 1], "start_s": [0.0, 1.0, 2.0, 5.0, 0.0],
                            "end_s": [3.0, 2.0, 4.0, 6.0, 1.0]})
    progress = dataclasses.replace(trace, attrs={**trace.attrs, "overlap_mode": "progress"})
    lanes, count = train_timeline.bucket_lanes(progress, buckets)
    assert list(lanes) == [0, 1, 1, 0, 0] and count == 2
    thread = dataclasses.replace(trace, attrs={**trace.attrs, "overlap_mode": "thread"})
    assert train_timeline.bucket_lanes(thread, buckets)[1] == 1  # the communication thread: one track, as recorded


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
