"""The stored multi-node campaign (results/2026-11-23-vm-cluster: real traces from a local SLURM
cluster of 4 virtual nodes, made by jobs/submit-sweep --file jobs/campaigns/vm-cluster.toml).

The analysis's cross-point numbers are checked against values this file computes itself from the
raw tables with h5py and numpy (never through the package's helpers); a damaged copy of the
campaign (a missing, a failed, an unreadable and an incomplete run, a checkpoint folder) is
reported, not refused; and the stored report regenerates byte for byte.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest

from helpers import assert_report_regenerates
from scaleprobe_analysis import allreduce, bucket_sweep
from scaleprobe_analysis.campaign import sweeps
from scaleprobe_analysis.campaign_status import scan_campaign
from scaleprobe_analysis.report import write_report
from scaleprobe_analysis.train_tables import scaling_groups

STORED = Path(__file__).resolve().parents[2] / "results" / "2026-11-23-vm-cluster"


def text(x) -> str:
    return x.decode() if isinstance(x, bytes) else str(x)


def raw_traces(prefix: str) -> list[Path]:
    return sorted(p for p in STORED.glob(f"{prefix}_N*.h5"))


def raw_point(f: h5py.File) -> tuple[int, int]:
    """(nodes, tasks per node) from the ranks table: distinct SLURM nodes."""
    nodes = len({text(n) for n in f["ranks/node"][()]})
    return nodes, int(f.attrs["nranks"]) // nodes


def raw_case_means_us(f: h5py.File, phase: str) -> dict[int, float]:
    """Per case: mean over ranks of each rank's mean wall time of `phase` (µs) — summary t_mean_us."""
    phases = [text(n) for n in f["phases/name"][()]]
    s = {k: f[f"samples/{k}"][()] for k in ("rank", "case", "phase", "wall_s")}
    keep = s["phase"] == phases.index(phase)
    out = {}
    for case in np.unique(s["case"][keep]):
        sel = keep & (s["case"] == case)
        per_rank = [s["wall_s"][sel & (s["rank"] == r)].mean() for r in np.unique(s["rank"][sel])]
        out[int(case)] = float(np.mean(per_rank)) * 1e6
    return out


@pytest.fixture(scope="module")
def scan():
    return scan_campaign(STORED)


def sweep_of(scan, kind: str, scaling: str = "strong"):
    found = [s for s in sweeps(scan.points) if s[0].id.kind == kind and s[0].id.scaling == scaling]
    assert len(found) == 1, f"expected one {kind} {scaling} sweep, found {len(found)}"
    return found[0]


def test_the_grid_every_point_and_pass_is_there(scan):
    grid = {}
    for path in raw_traces("allreduce"):
        with h5py.File(path, "r") as f:
            if text(f.attrs["scaling"]) != "strong":
                continue
            grid.setdefault(raw_point(f), []).append(text(f["provenance/env"].attrs["SCALEPROBE_PASS"]))
    assert set(grid) == {(n, t) for n in (1, 2, 3, 4) for t in (1, 2)}
    assert all(sorted(passes) == ["1", "2", "3"] for passes in grid.values()), grid
    points = sweep_of(scan, "allreduce")
    assert {(p.id.nodes, int(p.id.tasks_per_node)): len(p.traces) for p in points} == {k: 3 for k in grid}
    assert not [r for r in scan.runs if r.status != "complete"]


def test_failed_attempts_of_completed_runs_are_reported(scan):
    """The stored campaign's first submission lost 25 runs; the resume re-ran them. All attempts show."""
    failed = {(r.point, r.pass_no): r.failed_attempts for r in scan.runs if r.failed_attempts}
    assert len(failed) == 25
    (job, why), = failed[("bucket_sweep_N4_t2_c1", "2")]
    assert "Segmentation fault" in why  # the launcher's line, not the job script's "exited with 143"
    resnet = [w for k, a in failed.items() if k[0].startswith("resnet_train") for _, w in a]
    assert len(resnet) == 24 and all("resnet_train: error: " in w for w in resnet)
    text = (STORED / "report" / "report.md").read_text()
    assert "Failed attempts of runs that later completed (25 attempt(s) of 25 run(s)" in text


def test_allreduce_times_are_the_median_over_passes_of_the_raw_samples(scan):
    table = allreduce.sweep_table(sweep_of(scan, "allreduce"))
    expected = {}  # (nodes, tasks/node, algorithm, bytes) -> [t_mean per pass]
    for path in raw_traces("allreduce"):
        with h5py.File(path, "r") as f:
            if text(f.attrs["scaling"]) != "strong":
                continue
            nodes, tpn = raw_point(f)
            summary = {k: f[f"summary/{k}"][()] for k in ("case", "algorithm", "bytes", "t_mean_us")}
            means = raw_case_means_us(f, "allreduce")
            for case, alg, nbytes, t_mean in zip(*summary.values()):
                assert means[int(case)] == pytest.approx(t_mean, rel=1e-9)  # the binary's own summary
                expected.setdefault((nodes, tpn, text(alg), int(nbytes)), []).append(means[int(case)])
    assert len(table) == len(expected)
    for row in table.itertuples():
        runs = expected[(row.nodes, int(row.tasks_per_node), row.algorithm, int(row.bytes))]
        assert row.passes == len(runs) == 3
        assert row.t_mean_us == pytest.approx(np.median(runs), rel=1e-9)
        assert row.t_mean_us_min == pytest.approx(min(runs), rel=1e-9)
        assert row.t_mean_us_max == pytest.approx(max(runs), rel=1e-9)
        ranks = row.nodes * row.tasks_per_node
        busbw = [row.bytes / t / 1e3 * (2 * (ranks - 1) / ranks) for t in runs]
        assert row.busbw_GBps == pytest.approx(np.median(busbw), rel=1e-6)


def test_bucket_sweep_best_cap_from_the_raw_samples(scan):
    best = bucket_sweep.best_cap_table(bucket_sweep.sweep_table(sweep_of(scan, "bucket_sweep")))
    times = {}  # (nodes, tasks/node, algorithm, cap) -> [t_mean per pass]
    for path in raw_traces("bucket_sweep"):
        with h5py.File(path, "r") as f:
            nodes, tpn = raw_point(f)
            means = raw_case_means_us(f, "iteration")
            for case, alg, cap in zip(f["summary/case"][()], f["summary/algorithm"][()], f["summary/cap"][()]):
                times.setdefault((nodes, tpn, text(alg), text(cap)), []).append(means[int(case)])
    assert len(best) == len({k[:3] for k in times})
    for row in best.itertuples():
        nodes, tpn, _ = (int(x) for x in row.point.split("×"))
        medians = {cap: np.median(v) for (n, t, alg, cap), v in times.items()
                   if (n, t, alg) == (nodes, tpn, row.series)}
        want = min(medians, key=medians.get)
        assert row.cap == want
        assert row.t_mean_us == pytest.approx(medians[want], rel=1e-9)


@pytest.mark.parametrize("prefix", ["gpt_train", "resnet_train"])
def test_trainer_scaling_from_the_raw_iterations(scan, prefix):
    traces = [t for t in scan.campaign.traces if t.path.name.startswith(prefix)]
    groups = scaling_groups(traces)
    assert sorted(g.scaling for g in groups) == ["strong", "weak"]
    for group in groups:
        runs = {}  # (nodes, tasks/node) -> [time per iteration of the fastest case, per pass]
        for t in group.traces:
            with h5py.File(t.path, "r") as f:
                it = {k: f[f"iterations/{k}"][()] for k in ("rank", "step", "case", "step_s", "in_summary")}
                nodes, tpn = raw_point(f)
            keep = it["in_summary"] == 1
            per_case = {}
            for case in np.unique(it["case"][keep]):
                sel = keep & (it["case"] == case)
                slowest = [it["step_s"][sel & (it["step"] == s)].max() for s in np.unique(it["step"][sel])]
                per_case[int(case)] = float(np.mean(slowest))
            runs.setdefault((nodes, tpn), []).append(min(per_case.values()))
        table = group.table
        assert len(table) == len(runs) == 6  # nodes 1, 2, 4 x 1, 2 tasks per node
        t0 = np.median(runs[(1, 1)])
        for row in table.itertuples():
            got = runs[(row.nodes, int(row.tasks_per_node))]
            assert row.passes == len(got) == 2
            assert row.iteration_s == pytest.approx(np.median(got), rel=1e-9)
            ranks = row.nodes * row.tasks_per_node
            eff = t0 / np.median(got) if group.scaling == "weak" else t0 / (np.median(got) * ranks)
            assert row.efficiency == pytest.approx(eff, rel=1e-9)


def test_a_damaged_copy_is_reported_not_refused(tmp_path):
    camp = tmp_path / STORED.name
    shutil.copytree(STORED, camp, ignore=shutil.ignore_patterns("report"))
    traces = sorted(camp.glob("allreduce_N2_t2_c1_*.h5"))  # its three passes
    traces[0].unlink()                                            # missing
    failed = traces[1].with_name(traces[1].name + ".failed")      # failed, as the job moves it
    traces[1].rename(failed)
    log = camp / "logs" / (traces[1].name[:-3] + ".out")
    log.write_text(log.read_text() + "scaleprobe-job: error: allreduce exited with 1 (test)\n")
    bad = sorted(camp.glob("allreduce_N3_t1_c1_*.h5"))[0]         # unreadable
    bad.write_bytes(bad.read_bytes()[:3000])
    (camp / "allreduce_N1_t1_c1_j999.h5.partial").write_bytes(b"killed")   # incomplete
    (camp / "checkpoints").mkdir()
    with h5py.File(camp / "checkpoints" / "gpt_train_N1_t1_c1.h5", "w") as f:  # not a trace
        f.attrs["schema"] = "scaleprobe-checkpoint"
    scan = scan_campaign(camp)
    status = {(r.point, r.pass_no): r.status for r in scan.runs}
    assert status[("allreduce_N2_t2_c1", "1")] == "missing"       # traces sort by pass: 1, p2, p3
    assert status[("allreduce_N2_t2_c1", "2")] == "failed"
    assert status[("allreduce_N2_t2_c1", "3")] == "complete"
    assert status[("allreduce_N3_t1_c1", "1")] == "unreadable"
    assert [r.path.name for r in scan.runs if r.status == "incomplete"] == ["allreduce_N1_t1_c1_j999.h5.partial"]
    assert sum(s != "complete" for s in status.values()) == 4
    # The subject is the status and the sections going on, not the figures (the stored report's
    # regeneration below draws and compares every one): a text-only report.
    report = write_report(scan, tmp_path / "report", figures=False).read_text()
    assert "allreduce exited with 1 (test)" in report
    assert "`checkpoints/` (1 file" in report
    assert "## allreduce across points (strong scaling)" in report
    assert not any((tmp_path / "report" / "figures").iterdir())  # figures=False: none saved
    assert len(scan.campaign.traces) == len(list(STORED.glob("*.h5"))) - 3


def test_the_stored_report_regenerates_identically(scan, tmp_path):
    assert_report_regenerates(scan, STORED, tmp_path / "report")
