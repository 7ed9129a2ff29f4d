"""--backend on allreduce_perf and bucket_sweep (collectives/algorithms/backend.hpp): on Gloo every schedule and
Gloo's own allreduce run and verify beside MPI_Allreduce in one run, the trace and JSON say which
backend ran, and a backend or algorithm that does not fit is a one-line usage error (exit 2) that
writes nothing. Not Run where the build has no Gloo (optional part gloo)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import optional_parts
from helpers import build_dir, markdown_rows, mpi_env, need_binary, run_cli


def run(binary: str, *args: str, ranks: int = 2) -> subprocess.CompletedProcess:
    exe = build_dir() / "bin" / binary
    need_binary(exe)
    return subprocess.run(["mpirun", "-np", str(ranks), str(exe), *args], capture_output=True, text=True,
                          timeout=300, env=mpi_env())


@pytest.fixture(scope="module")
def gloo_built():
    exe = build_dir() / "bin" / "allreduce_perf"
    need_binary(exe)
    helptext = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60).stdout
    if "gloo:" not in helptext:
        optional_parts.skip("gloo", "this build has no Gloo transport (--backend lists no gloo)")


def table_rows(stdout: str) -> list[list[str]]:
    return [line.split() for line in stdout.splitlines() if line.strip() and not line.startswith("#")]


def test_allreduce_perf_on_gloo_runs_every_algorithm_and_verifies(tmp_path, gloo_built):
    out = tmp_path / "ar.json"
    proc = run("allreduce_perf", "--backend", "gloo", "-a", "all", "--sizes", "8,4K,1M", "-d", "f32,bf16", "-n", "5",
               "--no-membw", "-o", str(tmp_path / "ar.h5"), "--json", str(out), ranks=3)
    assert proc.returncode == 0, proc.stderr
    assert "# backend: gloo (Gloo " in proc.stdout
    assert "event loop at idle priority" in proc.stdout  # SCALEPROBE_GLOO_LOOP's default
    rows = table_rows(proc.stdout)
    assert {r[5] for r in rows} == {"mpi", "gloo", "naive", "tree", "ring", "rabenseifner", "doubling", "shm", "shm-seg",
                                    "hier"}
    assert len(rows) == 3 * 2 * 10 and all(r[-1] == "0" for r in rows), proc.stdout
    doc = json.loads(out.read_text())
    assert doc["provenance"]["run"]["backend"] == "gloo"
    assert doc["provenance"]["run"]["backend_library"].startswith("Gloo ")


def test_bucket_sweep_on_gloo_verifies(tmp_path, gloo_built):
    layout = tmp_path / "tiny.txt"
    layout.write_text("conv 16x3x3x3\nfc 10x4096\nbias 10\n")
    proc = run("bucket_sweep", "--backend", "gloo", "-l", str(layout), "-c", "tensor,all", "-a", "gloo,ring,mpi",
               "-n", "3", "-w", "1", "-o", str(tmp_path / "bs.h5"))
    assert proc.returncode == 0, proc.stderr
    rows = table_rows(proc.stdout)
    assert sorted(r[0] for r in rows) == ["gloo", "gloo", "mpi", "mpi", "ring", "ring"]
    assert all(r[-1] == "0" for r in rows), proc.stdout


@pytest.mark.parametrize("binary,args,message", [
    ("allreduce_perf", ["--backend", "nosuch"], "--backend: nosuch not in"),
    ("bucket_sweep", ["--backend", "nosuch"], "--backend: nosuch not in"),
    ("allreduce_perf", ["-a", "gloo"], "algorithm 'gloo' is gloo's own allreduce: it needs --backend gloo"),
])
def test_backend_usage_errors_are_one_line(tmp_path, binary, args, message):
    if "gloo" in message:
        exe = build_dir() / "bin" / binary
        need_binary(exe)
        if "gloo:" not in subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60).stdout:
            optional_parts.skip("gloo", "this build has no Gloo transport")
    trace = tmp_path / "t.h5"
    proc = run(binary, *args, "-o", str(trace), ranks=1)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    errors = [line for line in proc.stderr.splitlines() if f"{binary}: error:" in line]
    assert len(errors) == 1 and message in errors[0], proc.stderr
    assert not list(tmp_path.iterdir())


def test_gloo_loop_priority_is_idle_or_normal_else_one_line(tmp_path, gloo_built):
    # SCALEPROBE_GLOO_LOOP=normal leaves Gloo's event loop at the rank's own priority (as Gloo
    # starts it) and says so; anything but idle or normal is refused before a case runs, nothing written.
    exe = build_dir() / "bin" / "allreduce_perf"

    def run_with(value: str) -> subprocess.CompletedProcess:
        return subprocess.run(["mpirun", "-np", "2", str(exe), "--backend", "gloo", "-a", "gloo", "--sizes", "8", "-n",
                               "3", "--no-membw", "-o", str(tmp_path / f"{value}.h5")], capture_output=True, text=True,
                              timeout=300, env={**mpi_env(), "SCALEPROBE_GLOO_LOOP": value})

    normal = run_with("normal")
    assert normal.returncode == 0, normal.stderr
    assert "event loop at normal priority" in normal.stdout
    bad = run_with("fast")
    assert bad.returncode == 1, (bad.stdout, bad.stderr)
    errors = [line for line in bad.stderr.splitlines() if "allreduce_perf: error:" in line]
    assert errors and all(e.endswith("SCALEPROBE_GLOO_LOOP is 'fast': expected idle or normal") for e in errors), \
        bad.stderr
    assert not (tmp_path / "fast.h5").exists()


def nccl_built(binary: str = "allreduce_perf") -> bool:
    exe = build_dir() / "bin" / binary
    need_binary(exe)
    return "nccl:" in subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60).stdout


@pytest.mark.parametrize("binary,args", [
    ("allreduce_perf", ["-a", "nccl,ring", "--sizes", "1K", "--no-membw"]),
    ("bucket_sweep", ["-a", "nccl", "-l", "bert-base", "-c", "all"]),
])
def test_nccl_without_a_gpu_is_one_line_naming_it(tmp_path, binary, args):
    # The GPU path is built here (CUDA toolkit + NCCL) but no rank sees a device: one error, agreed by
    # every rank (none left in NCCL's set-up), naming the lowest rank; exit 1; nothing written.
    if not nccl_built(binary):
        optional_parts.skip("gpu", "this build has no GPU path (--backend lists no nccl)")
    if list(Path("/dev").glob("nvidia[0-9]*")):
        optional_parts.skip("no-gpu", "a GPU is present: the gpu-labelled tests run --backend nccl instead")
    proc = run(binary, "--backend", "nccl", *args, "-o", str(tmp_path / "t.h5"), ranks=2)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    errors = [line for line in proc.stderr.splitlines() if f"{binary}: error:" in line]
    assert errors == [f"{binary}: error: rank 0: no CUDA device visible to this rank (CUDA_VISIBLE_DEVICES, the "
                      "job's --gpus)"], proc.stderr
    assert not list(tmp_path.iterdir())


def test_trainers_refuse_nccl_their_gradients_are_on_the_host(tmp_path):
    if not nccl_built():
        optional_parts.skip("gpu", "this build has no GPU path (--backend lists no nccl)")
    proc = run("gpt_train", "--backend", "nccl", "-o", str(tmp_path / "t.h5"), ranks=1)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    errors = [line for line in proc.stderr.splitlines() if "gpt_train: error:" in line]
    assert len(errors) == 1 and "--backend: nccl not in {mpi,gloo}" in errors[0], proc.stderr
    assert not list(tmp_path.iterdir())


def test_report_sets_backends_side_by_side(tmp_path, gloo_built):
    # One configuration on MPI and on Gloo: one section with both columns and their ratio, the series
    # mpi (MPI_Allreduce, in both runs) among the rows as the control, and its figure.
    campaign = tmp_path / "c"
    for backend in ("mpi", "gloo"):
        proc = run("allreduce_perf", "--backend", backend, "-a", "ring,mpi", "--sizes", "1K,64K", "-n", "5",
                   "--no-membw", "-o", str(campaign / f"ar_{backend}.h5"))
        assert proc.returncode == 0, proc.stderr
    # The side-by-side section and its figure are the subject; the two traces' own figures are not drawn.
    proc = run_cli("report", str(campaign), "-o", str(tmp_path / "rep"), "--trace-figures", "none")
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "## allreduce: backends side by side (mpi, gloo)" in text
    rows = markdown_rows(text[text.index("#### time per call (µs) per backend"):], "| point |")
    assert {(r["series"], r["size"]) for r in rows} == {(s, n) for s in ("mpi", "ring") for n in ("1K", "64K")}
    for r in rows:
        assert float(r["gloo ÷ mpi"]) == pytest.approx(float(r["gloo"]) / float(r["mpi"]), rel=2e-3)
    assert list((tmp_path / "rep" / "figures").glob("backends-allreduce-*-mpi-gloo-side_by_side.png"))
