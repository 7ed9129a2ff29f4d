"""Shared fixtures: real traces made by running the real binaries once per session.

The binaries are found under $SCALEPROBE_BUILD_DIR (default build/release, relative to the
repository root). Without them, or without mpirun, every test that needs a real trace is
skipped with the reason; the pure-Python tests (alpha-beta fit) still run.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import (ANALYSIS, ALLREDUCE_ALGORITHMS, ALLREDUCE_ITERS, ALLREDUCE_SIZES, BUCKET_ALGORITHMS, BUCKET_CAPS,  # noqa: E402
                     BUCKET_ITERS, NRANKS, TINY_LAYOUT, build_dir, run_mpi)

sys.path.insert(0, str(ANALYSIS))


@pytest.fixture(scope="session")
def campaign_dir(tmp_path_factory) -> Path:
    """A campaign folder: allreduce.h5 at the top, sweep/bucket_sweep.h5 one level down."""
    bins = build_dir() / "collectives"
    allreduce, bucket = bins / "allreduce_perf", bins / "bucket_sweep"
    missing = [str(p) for p in (allreduce, bucket) if not os.access(p, os.X_OK)]
    if missing and os.environ.get("SCALEPROBE_REQUIRE_BINARIES") == "1":
        pytest.fail(f"scaleprobe binaries not built: {', '.join(missing)} missing")
    if missing:
        pytest.skip(f"scaleprobe binaries not built: {', '.join(missing)} missing (set SCALEPROBE_BUILD_DIR "
                    f"or run: cmake --build build/release --target allreduce_perf bucket_sweep)")
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun not found on PATH")
    root = tmp_path_factory.mktemp("campaign")
    layout = tmp_path_factory.mktemp("layout") / "tiny.txt"
    layout.write_text(TINY_LAYOUT)
    (root / "sweep").mkdir()
    run_mpi([mpirun, "-np", str(NRANKS), str(allreduce), "--sizes", ALLREDUCE_SIZES,
             "-a", ",".join(ALLREDUCE_ALGORITHMS), "-n", str(ALLREDUCE_ITERS), "-q",
             "-o", str(root / "allreduce.h5")])
    run_mpi([mpirun, "-np", str(NRANKS), str(bucket), "--layout", str(layout), "-c", ",".join(BUCKET_CAPS),
             "-a", ",".join(BUCKET_ALGORITHMS), "-n", str(BUCKET_ITERS), "-q",
             "-o", str(root / "sweep" / "bucket_sweep.h5")])
    return root


@pytest.fixture(scope="session")
def allreduce_trace(campaign_dir) -> Path:
    return campaign_dir / "allreduce.h5"


@pytest.fixture(scope="session")
def bucket_trace(campaign_dir) -> Path:
    return campaign_dir / "sweep" / "bucket_sweep.h5"


