"""Shared fixtures: real traces made by running the real binaries once per build (fixture_cache.py).

The binaries are found under $SCALEPROBE_BUILD_DIR (default build/release, relative to the
repository root). Without them, or without mpirun, every test that needs a real trace fails
naming what is missing (helpers.need_binary / need_mpirun: they are not optional parts); the
pure-Python tests (alpha-beta fit) still run. A test skips only for a part listed in
tests/optional-parts.txt (optional_parts.skip); under CTest a skip shows as Not Run, and in CI a
skip not allowed by the list fails (the plugin optional_parts.py).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from fixture_cache import shared_folder
from helpers import (ALLREDUCE_ALGORITHMS, ALLREDUCE_ITERS, ALLREDUCE_SIZES, BUCKET_ALGORITHMS, BUCKET_CAPS,
                     BUCKET_ITERS, NRANKS, TINY_LAYOUT, TRAIN_CAPS, TRAIN_GLOBAL_BATCH, TRAIN_RANK_BATCH, TRAIN_RANKS,
                     TRAIN_STEPS, build_dir, need_binary, need_mpirun, run_mpi)

pytest_plugins = ["optional_parts"]


@pytest.fixture(scope="session")
def campaign_dir(tmp_path_factory) -> Path:
    """A campaign folder: allreduce.h5 at the top, sweep/bucket_sweep.h5 one level down."""
    bins = build_dir() / "collectives"
    allreduce, bucket = bins / "allreduce_perf", bins / "bucket_sweep"
    need_binary(allreduce, bucket)
    mpirun = need_mpirun()

    def make(root: Path) -> None:
        layout = tmp_path_factory.mktemp("layout") / "tiny.txt"
        layout.write_text(TINY_LAYOUT)
        (root / "sweep").mkdir()
        run_mpi([mpirun, "-np", str(NRANKS), str(allreduce), "--sizes", ALLREDUCE_SIZES,
                 "-a", ",".join(ALLREDUCE_ALGORITHMS), "-n", str(ALLREDUCE_ITERS), "-q",
                 "-o", str(root / "allreduce.h5")])
        run_mpi([mpirun, "-np", str(NRANKS), str(bucket), "--layout", str(layout), "-c", ",".join(BUCKET_CAPS),
                 "-a", ",".join(BUCKET_ALGORITHMS), "-n", str(BUCKET_ITERS), "-q",
                 "-o", str(root / "sweep" / "bucket_sweep.h5")])

    return shared_folder("campaign", [allreduce, bucket], make, tmp_path_factory.mktemp("made") / "campaign")


@pytest.fixture(scope="session")
def allreduce_trace(campaign_dir) -> Path:
    return campaign_dir / "allreduce.h5"


@pytest.fixture(scope="session")
def bucket_trace(campaign_dir) -> Path:
    return campaign_dir / "sweep" / "bucket_sweep.h5"




@pytest.fixture(scope="session")
def train_campaign(tmp_path_factory) -> Path:
    """gpt_train (gpt-micro) at 1, 2 and 3 ranks, strong and weak scaling, two bucket caps.

    Layout: ``strong/np{p}.h5`` (global batch 6) and ``weak/np{p}.h5`` (2 rows per rank).
    About half a second per run; 3 ranks on a 2-core machine run oversubscribed.
    """
    exe = build_dir() / "trainers" / "gpt" / "gpt_train"
    need_binary(exe)
    mpirun = need_mpirun()

    def make(root: Path) -> None:
        for scaling, batch in (("strong", ["--global-batch", str(TRAIN_GLOBAL_BATCH)]),
                               ("weak", ["-B", str(TRAIN_RANK_BATCH)])):
            (root / scaling).mkdir()
            for p in TRAIN_RANKS:
                run_mpi([mpirun, "-np", str(p), str(exe), "-m", "gpt-micro", "-s", str(TRAIN_STEPS), *batch,
                         "-a", "ring", "--bucket-cap-mb", ",".join(TRAIN_CAPS), "--val-batches", "0",
                         "--synthetic-bytes", "20000", "--threads", "1", "-q", "-o",
                         str(root / scaling / f"np{p}.h5")], OMP_NUM_THREADS="1")

    return shared_folder("train_campaign", [exe], make, tmp_path_factory.mktemp("made") / "train_campaign")


@pytest.fixture(scope="session")
def grid_campaign(tmp_path_factory):
    """A sweep campaign in submit-sweep's layout, made by the real binaries (tests/python/grid.py)."""
    import grid
    bins, gpt = build_dir() / "collectives", build_dir() / "trainers" / "gpt" / "gpt_train"
    need_binary(bins / "allreduce_perf", bins / "bucket_sweep", gpt)
    need_mpirun()
    return grid.build(tmp_path_factory.mktemp("grid") / "campaign", bins, gpt, tmp_path_factory.mktemp("grid_scratch"))
