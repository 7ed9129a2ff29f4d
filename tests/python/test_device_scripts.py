"""The GPU node's prepared scripts run here at 2 ranks before they spend the node's minutes.

- scripts/device/node-shm.sh: what comes back is the log and one tarball of tables and --json
  summaries, no trace (a 16-rank trace is over the 16 MiB a file may bring back); the stored
  campaign's summarize.py reads those tables (a change of the printed table breaks it here);
- scripts/device/node-extras.sh: without a GPU the GPU part says it is skipped; the BLAS-core,
  engine (ring, shm and shm-seg; progress and thread mode) and p2p parts run and leave only the log and the tarball.
- scripts/device/node-pipeline.sh: two of its points (a balanced-stage bubble run, a 2x2 hybrid)
  run and come back as traces the campaign reader groups as those pipeline splits, pass 1 of mpirun.
- scripts/device/node-replay.sh: the calibration ring and the gpt-tiny runs come back as traces
  (at 2 ranks the calibration runs once per pass, not twice).
(node-scaling.sh is tested beside its importer, in test_bench_peers_scaling.py.)
"""
from __future__ import annotations

import shutil
import subprocess
import tarfile
from pathlib import Path

from helpers import REPO, build_dir, mpi_env, need_binary
from scaleprobe_analysis.campaign import group_points, load_campaign
from scaleprobe_analysis.train_parallelism import split_of

DEVICE = REPO / "scripts" / "device"
SHM_CAMPAIGN = REPO / "results" / "2026-11-27-vm-f6m207-shm-node"


def run_script(name: str, out: Path, **env) -> subprocess.CompletedProcess:
    env = {**mpi_env(), "OUT": str(out), "SP_BIN": str(build_dir() / "bin"), **env}
    return subprocess.run([str(DEVICE / name)], capture_output=True, text=True, timeout=300, env=env)


def members(tgz: Path) -> list[str]:
    with tarfile.open(tgz) as tar:
        return sorted(m.name for m in tar.getmembers() if m.isfile())


def test_node_shm_brings_back_tables_and_summaries_and_they_summarise(tmp_path):
    need_binary(build_dir() / "bin" / "allreduce_perf")
    out = tmp_path / "out"
    proc = run_script("node-shm.sh", out, SP_RANKS="2", SP_SIZES="8,64K", SP_SMALL_SIZES="8", SP_PASSES="1",
                      SP_BUDGET_S="60")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert sorted(p.name for p in out.iterdir()) == ["node-shm.log", "node-shm.tgz"]
    assert members(out / "node-shm.tgz") == ["node-shm/node.txt", "node-shm/raw/np2_p1.json", "node-shm/raw/np2_p1.log",
                                             "node-shm/raw/small_np2_p1.json", "node-shm/raw/small_np2_p1.log"]
    log = (out / "node-shm.log").read_text()
    assert "(4 shm rows)" in log and "(1 doubling rows)" in log

    campaign = tmp_path / "campaign"  # the stored summarize.py over this run's table
    (campaign / "raw" / "call1").mkdir(parents=True)
    shutil.copy(SHM_CAMPAIGN / "summarize.py", campaign)
    with tarfile.open(out / "node-shm.tgz") as tar:
        (campaign / "raw" / "call1" / "np2_p1.log").write_bytes(tar.extractfile("node-shm/raw/np2_p1.log").read())
    proc = subprocess.run(["/usr/bin/python3", str(campaign / "summarize.py")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split("\t") for line in (campaign / "summary.tsv").read_text().splitlines()[1:]]
    assert sorted((r[5], int(r[6])) for r in rows) == sorted(
        (a, b) for a in ("mpi", "ring", "shm", "shm-seg") for b in (8, 65536))
    assert all(r[3] == "2" and r[13] == "0" for r in rows)
    assert {float(r[10]) for r in rows if r[5] == "mpi"} == {1.0}


def test_node_extras_runs_its_parts_here(tmp_path):
    need_binary(build_dir() / "bin" / "gpt_train", build_dir() / "bin" / "p2p_perf")
    out = tmp_path / "out"
    proc = run_script("node-extras.sh", out, SP_STEPS="2", SP_PASSES="1", SP_BUDGET_S="120")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert sorted(p.name for p in out.iterdir()) == ["node-extras.log", "node-extras.tgz"]
    log = (out / "node-extras.log").read_text()
    has_gpu = shutil.which("nvidia-smi") is not None and "no GPU here" not in log
    assert has_gpu or "no GPU here: part 1 skipped" in log
    for part in ("blas_chosen_p1", "blas_Haswell_p1", "engine_np2_p1", "thread_np1_p1", "thread_nostream_np1_p1",
                 "p2p_np2"):
        assert f"{part}: exit 0" in log, log
    avx512 = "avx512f" in Path("/proc/cpuinfo").read_text().split()
    for part in ("blas_Cooperlake_p1", "blas_SkylakeX_p1"):
        assert f"{part}: exit 0" in log if avx512 else f"{part}: skipped (no AVX-512 here)" in log, log
    assert "# ring cap 25" in log and "# shm cap 25" in log and "# shm-seg cap 25" in log
    names = members(out / "node-extras.tgz")
    assert "node-extras/node.txt" in names and "node-extras/raw/engine_np2_p1.h5" in names


def test_node_pipeline_points_come_back_as_the_splits_they_ran(tmp_path):
    need_binary(build_dir() / "bin" / "gpt_train")
    out = tmp_path / "out"
    proc = run_script("node-pipeline.sh", out, SP_STEPS="1", SP_PASSES="1",
                      SP_ONLY="^(bubble_s4_m4_1f1b|pp2_m8_gpipe_t4)$")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert sorted(p.name for p in out.iterdir()) == ["node-pipeline.log", "node-pipeline.tgz"]
    log = (out / "node-pipeline.log").read_text()
    assert "bubble_s4_m4_1f1b pass 1 (4 ranks): exit 0" in log and "pp2_m8_gpipe_t4 pass 1 (4 ranks): exit 0" in log, log
    with tarfile.open(out / "node-pipeline.tgz") as tar:
        tar.extractall(tmp_path)
    points = group_points(load_campaign(tmp_path / "node-pipeline" / "raw").traces)
    assert sorted(split_of(p) for p in points) == [(2, 2, "gpipe", 8), (4, 1, "1f1b", 4)]
    assert {(p.id.launcher, p.passes) for p in points} == {("mpirun", ("1",))}


def test_node_replay_brings_back_every_trace(tmp_path):
    need_binary(build_dir() / "bin" / "gpt_train", build_dir() / "bin" / "allreduce_perf")
    out = tmp_path / "out"
    proc = run_script("node-replay.sh", out, SP_RANKS="2", SP_STEPS="2", SP_PASSES="1")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert sorted(p.name for p in out.iterdir()) == ["node-replay.log", "node-replay.tgz"]
    runs = ("calib2-p1", "gpt2-auto-p1", "gpt2-none-p1")
    assert members(out / "node-replay.tgz") == sorted(
        ["node-replay/node.txt"] + [f"node-replay/raw/{r}.{ext}" for r in runs for ext in ("h5", "txt")])
    log = (out / "node-replay.log").read_text()
    assert all(log.count(f"{r}: exit 0") == 1 for r in runs), log
