"""Campaign reports on a sweep made by the real binaries (grid.py): status, passes, grid, regeneration.

Expected numbers are computed here from the raw HDF5 tables with h5py and numpy, never with the
package's own helpers.
"""
from __future__ import annotations

import shutil

import h5py
import numpy as np
import pytest

from grid import FAILED_LOG, MANIFEST_COLUMNS, PASSES, write_manifest
from helpers import REPO, edit_h5, markdown_rows, run_cli
from scaleprobe_analysis import allreduce, bucket_sweep
from scaleprobe_analysis.campaign import (Options, cross_point_sweeps, group_points, load_campaign, split_case_options,
                                          sweeps)
from scaleprobe_analysis.campaign_status import scan_campaign
from scaleprobe_analysis.trace import TraceError, load_trace

DATA = REPO / "tests" / "data"

BAD = {"allreduce_N4_t1_c1_mpirun": "failed", "allreduce_N8_t1_c1_mpirun": "missing",
       "allreduce_N1_t1_c2_mpirun": "incomplete", "allreduce_N2_t1_c2_mpirun": "unreadable"}


def good_points(grid) -> list[str]:
    names = ["allreduce_N1_t1_c1_mpirun", "allreduce_N1_t2_c1_mpirun", "bucket_sweep_N1_t1_c1_mpirun",
             "bucket_sweep_N1_t2_c1_mpirun"]
    return names + (["allreduce_N2_t1_c1_mpirun", "allreduce_N2_t2_c1_mpirun"] if grid.multi_node else [])


@pytest.fixture(scope="module")
def report(grid_campaign, tmp_path_factory):
    out = tmp_path_factory.mktemp("grid_report") / "report"
    proc = run_cli("report", str(grid_campaign.root), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    return out / "report.md"


def t_mean_us_from_samples(path) -> dict[tuple[str, int], float]:
    """Per (algorithm, bytes): the mean over ranks of each rank's mean wall time of the case's samples (µs)."""
    with h5py.File(path) as f:
        phase = [p.decode() for p in f["phases/name"][()]].index("allreduce")
        rank, case, ph, wall = (f["samples"][c][()] for c in ("rank", "case", "phase", "wall_s"))
        out = {}
        for c, alg, nbytes in zip(f["summary/case"][()], f["summary/algorithm"][()], f["summary/bytes"][()]):
            mine = (case == c) & (ph == phase)
            out[(alg.decode(), int(nbytes))] = np.mean([wall[mine & (rank == r)].mean() for r in np.unique(rank[mine])]) * 1e6
    return out


def test_status_lists_every_bad_run_and_the_report_goes_on(report, grid_campaign):
    text = report.read_text()
    assert text.index("## Campaign status") < text.index("## allreduce across points") < text.index("## Per-trace details")
    counts = {r["status"]: (int(r["points"]), int(r["runs"])) for r in markdown_rows(text, "| status | points | runs |")}
    good = good_points(grid_campaign)
    assert counts["expected"] == (len(good) + len(BAD), len(good) + PASSES - 1 + len(BAD))
    assert counts["complete"] == (len(good), len(good) + PASSES - 1)
    assert all(counts[s] == (1, 1) for s in BAD.values())
    bad = {r["point"]: r for r in markdown_rows(text, "| point | pass | status | file | reason |")}
    assert {p: r["status"] for p, r in bad.items()} == BAD
    # Without a line of the program's own, the launcher's first error line says why (not the job script's).
    launcher_error = next(line for line in FAILED_LOG.strip().splitlines() if line.startswith("srun: error:"))
    assert bad["allreduce_N4_t1_c1_mpirun"]["reason"] == (f'job log: "{launcher_error}"; trace moved aside to '
                                                          "allreduce_N4_t1_c1_mpirun_j107.h5.failed")
    assert bad["allreduce_N2_t1_c2_mpirun"]["reason"].startswith("corrupt: truncated")
    assert bad["allreduce_N1_t1_c2_mpirun"]["file"] == "allreduce_N1_t1_c2_mpirun_j109.h5.partial"
    assert bad["allreduce_N8_t1_c1_mpirun"]["reason"] == "no trace (no job log yet)"
    points = {r["point"]: r for r in markdown_rows(text, "| point | status | runs | complete | passes |")}
    assert points["allreduce_N1_t2_c1_mpirun"]["passes"] == ", ".join(str(k) for k in range(1, PASSES + 1))
    assert {p for p, r in points.items() if r["status"] == "complete"} == set(good)
    # the valid traces are all reported on, the bad ones are not
    assert text.count("\n### allreduce_") == len([p for p in good if p.startswith("allreduce")]) + PASSES - 1
    assert "## bucket_sweep across points" in text


def test_non_trace_folders_are_counted_not_read(report, grid_campaign, tmp_path):
    checkpoint = grid_campaign.root / "checkpoints" / "gpt_train_N1_t1_c1.h5"
    assert h5py.is_hdf5(checkpoint)
    with pytest.raises(TraceError, match="not a scaleprobe trace"):
        load_trace(checkpoint)  # what reading it would have done
    logs = len(list((grid_campaign.root / "logs").iterdir()))
    assert f"Not read (not traces): `checkpoints/` (1 file), `logs/` ({logs} files)." in report.read_text()
    # the strict loader of plot, fit, timeline and compare skips them as well
    camp = tmp_path / "camp"
    shutil.copytree(grid_campaign.root / "checkpoints", camp / "checkpoints")
    shutil.copytree(grid_campaign.root / "logs", camp / "logs")
    shutil.copyfile(grid_campaign.passes[0], camp / "one.h5")
    assert [t.path.name for t in load_campaign(camp).traces] == ["one.h5"]
    proc = run_cli("fit", str(camp))
    assert proc.returncode == 0 and proc.stdout.startswith("# one: "), proc.stderr


def test_passes_are_combined_median_min_max(report, grid_campaign):
    per_pass = [t_mean_us_from_samples(p) for p in grid_campaign.passes]
    for path, from_samples in zip(grid_campaign.passes, per_pass):  # the binary's summary is that mean
        with h5py.File(path) as f:
            summary = dict(zip(zip((a.decode() for a in f["summary/algorithm"][()]), map(int, f["summary/bytes"][()])),
                               f["summary/t_mean_us"][()]))
        assert summary.keys() == from_samples.keys()
        assert np.allclose([summary[k] for k in summary], [from_samples[k] for k in summary], rtol=1e-9)
    points = [p for p in group_points([load_trace(p) for p in grid_campaign.passes])]
    assert len(points) == 1 and points[0].passes == tuple(str(k) for k in range(1, PASSES + 1))
    table = allreduce.sweep_table(points).set_index(["algorithm", "bytes"])
    rows = {(r["series"], r["size"]): r for r in markdown_rows(report.read_text(), "| size | series |")}
    for key in per_pass[0]:
        values = np.array([p[key] for p in per_pass])
        row = table.loc[key]
        assert row["passes"] == PASSES
        assert row["t_mean_us"] == pytest.approx(np.median(values), rel=1e-9)
        assert (row["t_mean_us_min"], row["t_mean_us_max"]) == pytest.approx((values.min(), values.max()), rel=1e-9)
        assert row["t_mean_us_spread"] == pytest.approx((values.max() - values.min()) / np.median(values), rel=1e-9)
        size = {8: "8", 1024: "1K", 16384: "16K"}[key[1]]
        assert float(rows[(key[0], size)]["1×2×1"]) == pytest.approx(np.median(values), rel=1e-3)  # 4 digits


def test_nodes_by_tasks_per_node_grid(report, grid_campaign):
    assert grid_campaign.multi_node, "the binaries do not record the ranks table's node column (SLURMD_NODENAME)"
    scan = scan_campaign(grid_campaign.root)
    layouts = {(p.id.kind, p.id.nodes, p.id.tasks_per_node) for p in scan.points}
    assert {(n, t) for k, n, t in layouts if k == "allreduce"} == {(1, 1), (1, 2), (2, 1), (2, 2)}
    two_nodes = next(t for t in scan.campaign.traces if t.path.name.startswith("allreduce_N2_t1"))
    with h5py.File(two_nodes.path) as f:
        assert sorted(n.decode() for n in f["ranks/node"][()]) == ["n1", "n2"]
        assert len({h.decode() for h in f["ranks/host"][()]}) == 1  # one host, two nodes
    text = report.read_text()
    section = text[text.index("## allreduce across points"):text.index("## bucket_sweep across points")]
    effect = markdown_rows(section[section.index("2 ranks:"):], "| size | series |")
    one_node = [t_mean_us_from_samples(p) for p in sorted(grid_campaign.passes)]
    two = t_mean_us_from_samples(two_nodes.path)
    for row in effect:
        key = (row["series"], {"8": 8, "1K": 1024, "16K": 16384}[row["size"]])
        expected = two[key] / np.median([p[key] for p in one_node])
        assert float(row["2×1×1 ÷ 1×2×1"]) == pytest.approx(expected, rel=2e-3)
    assert len(effect) == 6  # 3 sizes × (mpi, ring)
    for name in ("latency_vs_ranks", "busbw_vs_ranks", "alphabeta_vs_ranks", "caps_by_point", "best_cap_vs_ranks"):
        assert f"-{name}.png)" in text


def test_bucket_sweep_best_cap_per_point(grid_campaign):
    traces = [load_trace(p) for p in sorted(grid_campaign.root.glob("bucket_sweep_*.h5"))]
    best = bucket_sweep.best_cap_table(bucket_sweep.sweep_table(group_points(traces)))
    for trace in traces:
        with h5py.File(trace.path) as f:
            caps = [c.decode() for c in f["summary/cap"][()]]
            times = f["summary/t_mean_us"][()]
        row = best[best["ranks"] == trace.nranks].iloc[0]
        assert row["cap"] == caps[int(np.argmin(times))] and row["t_mean_us"] == pytest.approx(times.min(), rel=1e-12)


def test_report_regenerates_byte_identical(report, grid_campaign, tmp_path):
    again = tmp_path / "again"
    proc = run_cli("report", str(grid_campaign.root), "-o", str(again))
    assert proc.returncode == 0, proc.stderr
    first = {p.relative_to(report.parent): p.read_bytes() for p in report.parent.rglob("*") if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert first.keys() == second.keys() and len(first) > 20
    assert [name for name in first if first[name] != second[name]] == []


def test_moved_campaign_and_an_old_manifest(grid_campaign, tmp_path):
    moved = shutil.copytree(grid_campaign.root, tmp_path / "moved")  # the manifest still names the old paths
    status = {r.point: r.status for r in scan_campaign(moved).runs if r.point in BAD}
    assert status == BAD
    old = [c for c in MANIFEST_COLUMNS if c != "pass"]  # the bash submitter's manifest: every row is pass 1
    write_manifest(moved / "manifest.tsv", grid_campaign.manifest_rows, old)
    runs = [r for r in scan_campaign(moved).runs if r.point == "allreduce_N1_t2_c1_mpirun"]
    assert [(r.pass_no, r.status, r.attempts) for r in runs] == [("1", "complete", PASSES)]


def test_weak_scaling_is_keyed_by_size_per_rank(grid_campaign):
    assert grid_campaign.weak is not None, "the binaries do not take --scaling"
    points = group_points([load_trace(p) for p in sorted(grid_campaign.weak.glob("*.h5"))])
    assert [p.id.scaling for p in points] == ["weak", "weak"]
    table = allreduce.sweep_table(points)
    for ranks, part in table.groupby("ranks"):
        assert sorted(set(part["size"])) == [8, 1024, 16384]
        assert (part["bytes"] == part["size"] * ranks).all()
    section = allreduce.campaign_sections(points, Options())[0]
    assert "size per rank" in "\n".join(section.tables)


def test_simulated_pass_labels_the_cross_point_section(grid_campaign, tmp_path):
    paths = [shutil.copyfile(p, tmp_path / p.name) for p in grid_campaign.passes]
    with edit_h5(paths[1]) as f:
        f.attrs["simulated"] = np.int64(1)
    section = allreduce.campaign_sections(group_points([load_trace(p) for p in paths]), Options())[0]
    for fig in section.figures.values():
        assert fig._suptitle.get_text().startswith("SIMULATED/MODELLED: ")
        assert any(t.get_text() == "SIMULATED/MODELLED" for ax in fig.axes for t in ax.texts)
    point = markdown_rows("\n".join(section.intro), "| point |")[0]
    assert point["data"] == "SIMULATED/MODELLED, measured"


def _bucket_copy(src, dst, case_options: tuple[str, str], label: str = ""):
    """A copy of a bucket_sweep trace as if run with other caps (``-c``: (old, new)) and, if given, a label."""
    path = shutil.copyfile(src, dst)
    with edit_h5(path) as f:
        line = f["provenance"].attrs["command_line"]
        line = line.decode() if isinstance(line, bytes) else str(line)
        old, new = case_options
        assert f"-c {old}" in line
        f["provenance"].attrs["command_line"] = line.replace(f"-c {old}", f"-c {new}")
        if label:
            f["provenance/env"].attrs["SCALEPROBE_LABEL"] = label
    return path


def test_points_that_differ_in_case_options_share_one_sweep(grid_campaign, tmp_path):
    """Caps (a case option) and a label do not split a sweep: each point keeps its own case options in
    the points table and the label in its name; one layout run twice with no label to tell the runs apart
    is two sweeps."""
    one, two = (next(grid_campaign.root.glob(f"bucket_sweep_N1_t{t}_c1_mpirun_j*.h5")) for t in (1, 2))
    caps = "tensor,1,all"
    labelled = _bucket_copy(two, tmp_path / "labelled.h5", (caps, "1,all"), label="caps")
    points = group_points([load_trace(p) for p in (one, two, labelled)])
    sweep_groups = cross_point_sweeps(points)
    assert [[p.id.layout for p in g] for g in sweep_groups] == [["1×1×1", "1×2×1", "1×2×1 caps"]]
    section = bucket_sweep.sweep_section(sweep_groups[0])
    assert f"-c {caps}" not in section.intro[0] and "--layout" in section.intro[0]
    rows = markdown_rows("\n".join(section.intro), "| point |")
    assert [r["case_options"].split()[:2] for r in rows] == [["-c", caps], ["-c", caps], ["-c", "1,all"]]
    times = markdown_rows("\n".join(section.tables), "| point |")
    assert {r["point"] for r in times} >= {"1×1×1", "1×2×1", "1×2×1 caps"}
    # The copy is a point of its own (not a second pass of 1×2×1): the same times, each from one pass.
    by_point = {pt: [(r["series"], r["tensor"], r["all"]) for r in times if r["point"] == pt] for pt in ("1×2×1", "1×2×1 caps")}
    assert by_point["1×2×1"] == by_point["1×2×1 caps"] != []
    assert [r["passes"] for r in rows] == ["1", "1", "1"]

    unlabelled = _bucket_copy(one, tmp_path / "unlabelled.h5", (caps, "1,all"))
    points = group_points([load_trace(p) for p in (one, two, unlabelled)])
    assert sorted([p.id.layout for p in g] for g in sweeps(points)) == [["1×1×1"], ["1×1×1", "1×2×1"]]


@pytest.mark.parametrize("bench, config, common, cases", [
    ("bucket_sweep", "bucket_sweep --layout resnet50 -c 25,all -a ring -n1 --warmup=0 --scaling strong",
     "bucket_sweep --layout resnet50 --scaling strong", "-c 25,all -a ring -n1 --warmup=0"),
    ("allreduce", "allreduce_perf --sizes 8,64K -w -1 --max-bytes=1M --scaling weak",
     "allreduce_perf --scaling weak", "--sizes 8,64K -w -1 --max-bytes=1M"),
    ("p2p", "p2p_perf -n 5", "p2p_perf -n 5", ""),  # no case options declared: one command, one sweep
])
def test_case_options_are_split_from_the_command(bench, config, common, cases):
    assert split_case_options(bench, config) == (common, cases)


def test_a_trainers_own_blas_core_is_not_a_different_environment(tmp_path):
    """The report warns when runs were launched under different kernel variables; the OpenBLAS core
    a trainer set itself (OPENBLAS_CORETYPE with SCALEPROBE_BLAS_CORE_DETECTED beside it) is not
    one: the same run launched where OpenBLAS detects its core warns of nothing, a core the user set does."""
    from scaleprobe_analysis.campaign_status import status_lines
    chosen = tmp_path / "c" / "chosen.h5"
    chosen.parent.mkdir()
    shutil.copy(DATA / "train-gpt-micro-thread-1rank.h5", chosen)
    assert load_trace(chosen).env.get("SCALEPROBE_BLAS_CORE_DETECTED") and load_trace(chosen).kernel_env.get(
        "OPENBLAS_CORETYPE")
    detected = shutil.copy(chosen, tmp_path / "c" / "detected.h5")
    with edit_h5(detected) as f:
        for name in ("SCALEPROBE_BLAS_CORE_DETECTED", "OPENBLAS_CORETYPE"):
            del f["provenance/env"].attrs[name]

    def warning(folder):
        return [line for line in status_lines(scan_campaign(folder)) if "launched under" in line]

    assert warning(tmp_path / "c") == []
    with edit_h5(detected) as f:
        f["provenance/env"].attrs["OPENBLAS_CORETYPE"] = "Haswell"
    assert len(warning(tmp_path / "c")) == 1
