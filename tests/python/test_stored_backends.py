"""The stored MPI-and-Gloo campaign (results/2026-11-25-vm-f25m17-backends, made by jobs/submit-sweep
--file jobs/campaigns/vm-backends.toml): its report regenerates byte for byte, and every number of its
README's table is the report's (medians over 3 passes), checked here from the raw summary tables."""
from __future__ import annotations

import re
from pathlib import Path

import h5py
import numpy as np
import pytest

from helpers import assert_report_regenerates
from scaleprobe_analysis.campaign_status import scan_campaign

STORED = Path(__file__).resolve().parents[2] / "results" / "2026-11-25-vm-f25m17-backends"


@pytest.fixture(scope="module")
def scan():
    return scan_campaign(STORED)


def test_the_stored_report_regenerates_identically(scan, tmp_path):
    text = assert_report_regenerates(scan, STORED, tmp_path / "report")
    assert "## allreduce: backends side by side (mpi, gloo)" in text


def median_time(point: str, algorithm: str, nbytes: int) -> float:
    """Median over the point's passes of summary t_mean_us, from the raw tables."""
    values = []
    for path in sorted(STORED.glob(f"{point}_j*.h5")) + sorted(STORED.glob(f"{point}_p*_j*.h5")):
        with h5py.File(path) as f:
            s = {k: f[f"summary/{k}"][()] for k in ("algorithm", "bytes", "t_mean_us")}
        algos = [a.decode() if isinstance(a, bytes) else str(a) for a in s["algorithm"]]
        values += [t for a, b, t in zip(algos, s["bytes"], s["t_mean_us"]) if a == algorithm and b == nbytes]
    assert len(values) == 3, (point, algorithm, nbytes, values)
    return float(np.median(values))


def test_the_readme_table_is_the_campaigns_medians():
    rows = [line for line in (STORED / "README.md").read_text().splitlines() if re.match(r"\| \d nodes? × ", line)]
    assert len(rows) == 5
    sizes = {"8 B": 8, "64 KiB": 64 << 10, "16 MiB": 16 << 20}
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        nodes, tasks = (int(x) for x in re.match(r"(\d) nodes? × (\d)", cells[0]).groups())
        nbytes = sizes[cells[0].split(", ")[1]]
        point = f"allreduce_N{nodes}_t{tasks}_c1"
        expected = [median_time(point, "mpi", nbytes), median_time(point + "_gloo", "gloo", nbytes),
                    median_time(point, "ring", nbytes), median_time(point + "_gloo", "ring", nbytes)]
        for cell, value in zip(cells[1:], expected):
            assert float(cell.replace(" ", "")) == pytest.approx(value, rel=0.01, abs=0.05), (row, value)
