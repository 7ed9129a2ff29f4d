"""scripts/bench-peers' scaling comparison (python/scaleprobe_peers/scaling.py) and the GPU node's
tarball (python/scaleprobe_peers/from_node.py):

- the scaling rows (weak scaling at 1…N ranks beside DDP) are each side's step over its own
  no-communication step, efficiencies t(1)/t(n), in the pass's side order, from synthetic traces;
  a trace that is not the run its name says is refused; a run past its timeout goes with its
  children; scripts/device/node-scaling.sh runs here at ranks 1 and 2 and --from-node makes a
  campaign of its tarball whose rows are the traces' numbers (a foreign tarball is refused).
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import optional_parts
from helpers import REPO, build_dir, mpi_env, need_binary, run_peers

from scaleprobe_peers import cli, runs
from scaleprobe_peers.summary import read_tsv


def fake_trainer_trace(path: Path, program: str, model: str, nranks: int, no_comm: int, overlap: str,
                       median_s: float, imbalance: float) -> None:
    """The part of a trainer trace the scaling rows read: the cases table and the run's attributes."""
    import h5py
    from scaleprobe_analysis import digest
    with h5py.File(path, "w", userblock_size=digest.BLOCK_BYTES) as f:  # digested, as the trainers write
        f.attrs.update(program=program, model_name=model, nranks=nranks, no_comm=no_comm, overlap_mode=overlap,
                       backend="mpi")
        c = f.create_group("cases")
        c["iteration_median_s"] = [median_s]
        c["compute_imbalance"] = [imbalance]
    digest.stamp_file(path)


def fake_ddp_line(path: Path, median_s: float, baseline_s: float) -> None:
    path.write_text(json.dumps({"cap": "25", "iteration_median_s": median_s,
                                "baseline_iteration_median_s": baseline_s}) + "\n")


# step times (s) per (ranks, pass): nocomm, gloo, mpi, ddp, ddp no_sync
TIMES = {(1, 1): (0.30, 0.31, 0.305, 0.40, 0.39), (1, 2): (0.32, 0.33, 0.32, 0.42, 0.41),
         (2, 1): (0.40, 0.50, 0.44, 0.60, 0.48), (2, 2): (0.42, 0.56, 0.46, 0.66, 0.50)}


def fake_scaling_raw(raw: Path) -> None:
    raw.mkdir(parents=True, exist_ok=True)
    for (n, p), (nocomm, gloo, mpi, ddp, nosync) in TIMES.items():
        for side, t, mode in (("nocomm", nocomm, "none"), ("gloo", gloo, "thread"), ("mpi", mpi, "progress")):
            fake_trainer_trace(raw / f"scaling_gpt_np{n}_{side}_p{p}.h5", "gpt_train", "gpt-tiny", n,
                               int(side == "nocomm"), mode, t, 0.1 * n + (0.01 if side != "nocomm" else 0))
        fake_ddp_line(raw / f"scaling_gpt_np{n}_ddp_p{p}.jsonl", ddp, nosync)


def test_scaling_rows_are_each_sides_step_over_its_own_no_comm_step(tmp_path):
    from scaleprobe_peers import scaling
    fake_scaling_raw(tmp_path / "raw")
    # an incomplete group (no MPI run, no DDP run) gives no rows
    fake_trainer_trace(tmp_path / "raw" / "scaling_resnet_np2_nocomm_p1.h5", "resnet_train", "resnet20", 2, 1,
                       "none", 0.1, 0.0)
    fake_trainer_trace(tmp_path / "raw" / "scaling_resnet_np2_gloo_p1.h5", "resnet_train", "resnet20", 2, 0,
                       "thread", 0.2, 0.0)
    rows = scaling.rows(tmp_path / "raw", tmp_path)
    assert {r.case.split(", ")[0] for r in rows} == {"gpt-tiny"}
    by = {(r.comparison, r.case, r.pass_no): r for r in rows}
    # per group: 2 overheads + 3 step rows; efficiency (1 -> 2 ranks, Gloo and MPI) once per pass
    assert len(rows) == 4 * 5 + 2 * 2
    for (n, p), (nocomm, gloo, mpi, ddp, nosync) in TIMES.items():
        ranks = f"{n} rank{'s' if n > 1 else ''}"
        g = by[("scaling", f"gpt-tiny, {ranks}, Gloo", p)]
        assert g.metric == "overhead" and g.ours_value == pytest.approx(gloo / nocomm)
        assert g.peer_value == pytest.approx(ddp / nosync)
        assert g.speedup == pytest.approx((ddp / nosync) / (gloo / nocomm))  # above 1: less overhead than DDP
        assert g.ours.startswith("gpt_train ring on Gloo (overlap thread)")
        assert g.ours_file == f"raw/scaling_gpt_np{n}_gloo_p{p}.h5;raw/scaling_gpt_np{n}_nocomm_p{p}.h5"
        assert g.first == ("ours" if p % 2 else "peer")
        m = by[("scaling", f"gpt-tiny, {ranks}, MPI", p)]
        assert m.ours_value == pytest.approx(mpi / nocomm) and m.peer_value == g.peer_value
        assert "ring on MPI (overlap progress)" in m.ours
        step = by[("scaling_step", f"gpt-tiny, {ranks}, Gloo", p)]
        assert (step.ours_value, step.peer_value) == (pytest.approx(gloo * 1e3), pytest.approx(ddp * 1e3))
        base = by[("scaling_step", f"gpt-tiny, {ranks}, no communication", p)]
        assert (base.ours_value, base.peer_value) == (pytest.approx(nocomm * 1e3), pytest.approx(nosync * 1e3))
    for p in (1, 2):
        e = by[("scaling_efficiency", "gpt-tiny, 1→2 ranks, Gloo", p)]
        assert e.ours_value == pytest.approx(TIMES[(1, p)][1] / TIMES[(2, p)][1])
        assert e.peer_value == pytest.approx(TIMES[(1, p)][3] / TIMES[(2, p)][3])
        assert e.speedup == pytest.approx(e.ours_value / e.peer_value)
    # the per-rank-count table: medians and every pass, and the imbalance of each run kind
    table = scaling.markdown(rows, tmp_path / "raw")
    line = next(x for x in table.splitlines() if x.startswith("| gpt-tiny | 2 |"))
    assert "1.29 (1.25, 1.33)" in line  # Gloo: 0.50/0.40 and 0.56/0.42
    assert "| 1.29 (1.25, 1.32) |" in line  # DDP: 0.60/0.48 and 0.66/0.50
    assert line.endswith("| 20 % / 21 % / 21 % |")
    # and in summary.md, after the peer tables
    md = cli.summary_markdown(rows, tmp_path / "raw")
    assert md.index(cli.TITLES["scaling"]) < md.index(cli.TITLES["scaling_efficiency"]) < md.index(table.splitlines()[0])


def test_scaling_refuses_a_trace_that_is_not_the_run_its_name_says(tmp_path):
    from scaleprobe_peers import scaling
    fake_scaling_raw(tmp_path / "raw")
    # a data-parallel run stored as the no-communication baseline
    fake_trainer_trace(tmp_path / "raw" / "scaling_gpt_np2_nocomm_p1.h5", "gpt_train", "gpt-tiny", 2, 0, "thread",
                       0.4, 0.0)
    with pytest.raises(runs.PeerError, match="not the run its name says"):
        scaling.rows(tmp_path / "raw", tmp_path)


@pytest.mark.parametrize("cpus, ranks", [(1, [1]), (2, [1, 2]), (4, [1, 2, 4]), (16, [1, 8, 16])])
def test_scaling_default_rank_counts(cpus, ranks):
    from scaleprobe_peers import scaling
    assert scaling.default_ranks(cpus) == ranks


def test_scaling_sides_alternate_and_share_the_binding(tmp_path):
    """A B / B A, and the DDP workers get the CPU sets mpirun gave the trainer's ranks."""
    from scaleprobe_peers import scaling
    assert scaling.order(1) == ("nocomm", "gloo", "mpi", "ddp") and scaling.order(2) == scaling.order(1)[::-1]
    ctx = runs.Context(build_dir(), tmp_path)
    binding = {"options": ["--map-by", "core", "--bind-to", "core"], "cpu_sets": ["0", "1"]}
    cfg = {"model": "gpt-tiny", "batch": 8, "steps": 3, "cap": "25"}
    cmd = scaling.trainer_command(ctx, "gpt", cfg, 2, "gloo", binding, tmp_path / "t.h5")
    assert cmd[:7] == ["mpirun", "-np", "2", "--map-by", "core", "--bind-to", "core"]
    assert cmd[cmd.index("--backend") + 1] == "gloo" and cmd[cmd.index("-s") + 1] == "4"
    assert "--no-comm" in scaling.trainer_command(ctx, "gpt", cfg, 2, "nocomm", binding, tmp_path / "t.h5")
    ddp = scaling.ddp_command(ctx, "resnet", {**cfg, "model": "resnet20"}, 2, binding, tmp_path / "d.jsonl", 60)
    assert ddp[1:3] == ["-m", "scaleprobe_peers.resnet_ddp_torch"] and ddp[ddp.index("--cpu-sets") + 1] == "0;1"
    assert "--no-baseline" not in ddp  # its no_sync case is the baseline


def node_tarball(tmp_path: Path, src: Path) -> Path:
    import tarfile
    tgz = tmp_path / "node-scaling.tgz"
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(src, arcname="node-scaling")
    return tgz


def test_from_node_refuses_what_is_not_a_node_tarball(tmp_path):
    src = tmp_path / "node-scaling"
    fake_scaling_raw(src / "raw")
    proc = run_peers("--from-node", str(node_tarball(tmp_path, src)), "--out", str(tmp_path / "c"))
    assert proc.returncode == 1 and "node-scaling/plan.json missing" in proc.stderr and "Traceback" not in proc.stderr
    import tarfile
    evil = tmp_path / "evil.tgz"
    with tarfile.open(evil, "w:gz") as tar:
        tar.add(src / "raw" / "scaling_gpt_np1_ddp_p1.jsonl", arcname="../escape.jsonl")
    proc = run_peers("--from-node", str(evil), "--out", str(tmp_path / "c"))
    assert proc.returncode == 1 and "unexpected member ../escape.jsonl" in proc.stderr
    assert not (tmp_path / "escape.jsonl").exists() and not (tmp_path / "c").exists()


def test_node_script_at_two_ranks_and_its_import(tmp_path):
    """scripts/device/node-scaling.sh end to end here (the build's programs, gpt-micro, ranks 1 and 2,
    one pass), then scripts/bench-peers --from-node: a campaign whose rows are the traces' numbers."""
    optional_parts.importorskip("torch", "torch")
    need_binary(build_dir() / "trainers" / "gpt" / "gpt_train")
    out = tmp_path / "out"
    env = {**mpi_env(), "OUT": str(out), "SP_BIN": str(build_dir() / "bin"), "SP_PYTHON": "/usr/bin/python3",
           "SP_RANKS": "1,2", "SP_PASSES": "1", "SP_STEPS": "2", "SP_MODELS": "gpt", "SP_SIZES": "gpt=gpt-micro:2",
           "SP_BUDGET_S": "120",
           # OpenBLAS made to detect a generic core: the trainers choose theirs, which both sides then run
           "SCALEPROBE_TEST_BLAS_DETECTED": "Prescott"}
    env.pop("OPENBLAS_CORETYPE", None)
    proc = subprocess.run([str(REPO / "scripts" / "device" / "node-scaling.sh")], capture_output=True, text=True,
                          timeout=240, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert sorted(p.name for p in out.iterdir()) == ["node-scaling.log", "node-scaling.tgz"]
    assert "8 run(s) ok of 8 listed" in (out / "node-scaling.log").read_text()
    campaign = tmp_path / "campaign"
    proc = run_peers("--from-node", str(out / "node-scaling.tgz"), "--out", str(campaign))
    assert proc.returncode == 0, proc.stderr
    node = (campaign / "node.txt").read_text()
    assert "nproc: " in node and "--- lscpu" in node and "set here for both sides" in node, node
    readme = (campaign / "README.md").read_text()
    assert "nproc: " in readme and "`Model name`" in readme and "rank counts 1, 2" in readme
    assert "8 ok" in readme and "git_revision" in readme
    rows = read_tsv(campaign / "summary.tsv")
    assert {r.comparison for r in rows} == {"scaling", "scaling_step", "scaling_efficiency"}
    assert len(rows) == 2 * 5 + 2
    for r in rows:  # every number is the trace's or the DDP line's, as the row's files say
        if r.comparison == "scaling":
            run_, base = r.ours_file.split(";")
            assert r.ours_value == pytest.approx(runs.trace_case_median_s(campaign / run_)["25"] /
                                                 runs.trace_case_median_s(campaign / base)["25"])
            d = json.loads((campaign / r.peer_file).read_text())
            assert r.peer_value == pytest.approx(d["iteration_median_s"] / d["baseline_iteration_median_s"])
            assert d["cpus"] == ([[0]] if "1 rank," in r.case else [[0], [1]])  # pinned like mpirun's ranks
    assert (campaign / "summary.md").read_text() == cli.summary_markdown(rows, campaign / "raw")
    assert "trainer scaling: gpt gpt-micro" in (campaign / "report" / "report.md").read_text()


def test_a_run_past_its_timeout_is_stopped_with_its_children(tmp_path):
    """The node's per-run timeouts: the whole process group goes (mpirun's ranks, DDP's workers)."""
    import time
    pid_file = tmp_path / "child.pid"
    t0 = time.monotonic()
    with pytest.raises(runs.PeerError, match="timed out after 1 s"):
        runs.run(["sh", "-c", f"sleep 60 & echo $! > {pid_file}; wait"], tmp_path / "log", {}, timeout=1)
    assert time.monotonic() - t0 < 20
    child = int(pid_file.read_text())

    def alive() -> bool:
        try:
            return Path(f"/proc/{child}/stat").read_text().split()[2] != "Z"
        except FileNotFoundError:
            return False
    for _ in range(50):  # reaped by init shortly after the kill
        if not alive():
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the run's child {child} outlived its timeout")
