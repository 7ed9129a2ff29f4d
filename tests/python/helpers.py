"""Constants and helpers shared by the Python tests (imported by conftest and test modules)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import h5py
import pytest

REPO = Path(__file__).resolve().parents[2]
ANALYSIS = REPO / "analysis"   # the scaleprobe-analyze wrapper
PYTHON_TREE = REPO / "python"  # the packages (pytest.ini: pythonpath)

ALLREDUCE_SIZES = "8,256,4K,64K"
ALLREDUCE_ALGORITHMS = ["mpi", "naive", "tree", "ring", "rabenseifner"]
ALLREDUCE_ITERS = 10
BUCKET_ALGORITHMS = ["ring", "mpi"]
BUCKET_CAPS = ["tensor", "1", "all"]
BUCKET_ITERS = 3
NRANKS = 2
# Trainer traces (gpt_train on the data-parallel engine): a tiny model, a few steps, two caps cycled
# step by step; 8 steps = 2 excluded (first round of cases) + 3 summarised steps per cap.
TRAIN_RANKS = (1, 2, 3)
TRAIN_CAPS = ("tensor", "0.01")
TRAIN_STEPS = 8
TRAIN_GLOBAL_BATCH = 6  # strong scaling: split over 1, 2, 3 ranks
TRAIN_RANK_BATCH = 2  # weak scaling: rows per rank
# A small gradient layout (6 tensors, 2.2 MiB as f32) so the sweep takes about a second.
TINY_LAYOUT = """conv.weight 64x3x7x7
bn.weight 64
bn.bias 64
fc.weight 1000x512
fc.bias 1000
head.weight 256x256
"""


@contextmanager
def edit_h5(path):
    """Open a trace or checkpoint for a test's deliberate change, then re-stamp its whole-file
    digest, so readers see a file written with that content rather than a corrupt one."""
    from scaleprobe_analysis import digest  # python/ is importable (pytest.ini: pythonpath)

    with h5py.File(path, "r+") as f:
        yield f
    digest.restamp(path)


def build_dir() -> Path:
    path = Path(os.environ.get("SCALEPROBE_BUILD_DIR", "build/release"))
    return path if path.is_absolute() else REPO / path


def mpi_env() -> dict:
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_mpi_yield_when_idle="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    return env


def run_mpi(cmd: list[str], **env) -> None:
    proc = subprocess.run(cmd, env={**mpi_env(), **env}, capture_output=True, text=True, timeout=180)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")


def mpi_traces(root: Path, exe: Path, runs, *args: str) -> Path:
    """A campaign folder of real traces: ``mpirun -np RANKS EXE ARGS -o ROOT/NAME.h5`` for every
    (RANKS, NAME) of ``runs``; fails the test when the binary is not built or a run fails."""
    need_binary(exe)
    root.mkdir(parents=True, exist_ok=True)
    for ranks, name in runs:
        run_mpi(["mpirun", "-np", str(ranks), str(exe), *args, "-o", str(root / f"{name}.h5")])
    return root


def run_cli(*args: str, wrapper: bool = False) -> subprocess.CompletedProcess:
    """Run scaleprobe-analyze in a child process (module form, or the shell wrapper)."""
    if wrapper:
        cmd = [str(ANALYSIS / "scaleprobe-analyze"), *args]
    else:
        cmd = [sys.executable, "-m", "scaleprobe_analysis", *args]
    env = dict(os.environ, PYTHONPATH=str(PYTHON_TREE))
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def run_peers(*args: str) -> subprocess.CompletedProcess:
    """Run scripts/bench-peers in a child process (MPI's environment for its runs)."""
    return subprocess.run([str(REPO / "scripts" / "bench-peers"), *args], capture_output=True, text=True,
                          timeout=300, env=mpi_env())


def report_text(campaign: Path, out: Path, *options: str) -> str:
    """`scaleprobe-analyze report CAMPAIGN -o OUT [OPTIONS]` must succeed; its report.md."""
    proc = run_cli("report", str(campaign), "-o", str(out), *options)
    assert proc.returncode == 0, proc.stderr
    return (out / "report.md").read_text()


def report_section(campaign: Path, tmp_path: Path, section: str, header: str) -> tuple[Path, str, list[dict]]:
    """The report of ``campaign`` in ``tmp_path``/report (report_text), which must have ``section``:
    its folder, its text and the rows of its table whose header line starts with ``header``."""
    out = tmp_path / "report"
    text = report_text(campaign, out)
    assert section in text
    return out, text, markdown_rows(text, header)


def markdown_rows(text: str, header: str) -> list[dict]:
    """The rows of the first markdown table in ``text`` whose header line starts with ``header``, as dicts."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    names = [c.strip() for c in lines[start].strip().strip("|").split("|")]
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(names, (c.strip() for c in line.strip().strip("|").split(" | ")))))
    return rows


def need_binary(*paths: Path) -> None:
    """Fails the test when a binary is not built: this build's programs are not an optional part
    (tests/optional-parts.txt), so a test that needs one is never skipped for it."""
    missing = [str(p) for p in paths if not os.access(p, os.X_OK)]
    if missing:
        pytest.fail(f"not built: {', '.join(missing)} (set SCALEPROBE_BUILD_DIR or run: cmake --build --preset "
                    f"release)", pytrace=False)


def need_mpirun() -> str:
    """mpirun's path; fails the test without it (scripts/install-deps.sh installs Open MPI)."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.fail("mpirun not found on PATH (scripts/install-deps.sh installs Open MPI)", pytrace=False)
    return mpirun


def assert_report_regenerates(scan, stored: Path, out: Path) -> str:
    """Writes the report of a stored campaign's scan under ``out`` and asserts it equals the stored
    ``report/`` byte for byte (report.md and every figure); returns the report's text."""
    from scaleprobe_analysis.report import write_report  # python/ is importable (pytest.ini: pythonpath)

    made_dir = write_report(scan, out).parent
    text = (made_dir / "report.md").read_text()
    assert text == (stored / "report" / "report.md").read_text()
    assert differing_figures(made_dir / "figures", stored / "report" / "figures") == []
    return text


def _figure_bytes(path: Path) -> bytes:
    """A figure's bytes; an SVG's with its clip-path ids renumbered in order of appearance. Matplotlib
    names a clip path by a hash of its rectangle's floats, whose last bits differ between CPUs (numpy's
    vector paths) while every coordinate it writes is the same (seen: an AVX2 EPYC against the
    AVX-512 machine that stored the figure)."""
    data = path.read_bytes()
    if path.suffix != ".svg":
        return data
    ids: dict[bytes, bytes] = {}
    return re.sub(rb"\bp[0-9a-f]{10}\b", lambda m: ids.setdefault(m.group(0), b"clip%d" % len(ids)), data)


def differing_figures(made: Path, stored: Path) -> list:
    """The names of figures that differ between two folders (or exist in one only), SVG clip ids aside."""
    names = sorted({p.name for p in made.iterdir()} | {p.name for p in stored.iterdir()})
    return [n for n in names if not ((made / n).exists() and (stored / n).exists()
                                     and _figure_bytes(made / n) == _figure_bytes(stored / n))]
