"""The collective kind (python/scaleprobe_analysis/collective.py) on traces of the real
collective_perf: an all-gather at 2 and 3 ranks (sizes rounded down differently at each) make one
sweep whose report names the collective and its MPI call, groups cases by the size asked, and
gives each trace its figures; compare matches the two passes' cases. Expected values come from the
raw HDF5 tables read with h5py."""
from __future__ import annotations

import re

import h5py
import pytest

from helpers import build_dir, mpi_traces, report_text, run_cli


@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    return mpi_traces(tmp_path_factory.mktemp("collective") / "c", build_dir() / "bin" / "collective_perf",
                      ((2, "cp_N1_t2_c1_p1"), (2, "cp_N1_t2_c1_p2"), (3, "cp_N1_t3_c1")),
                      "-c", "all_gather", "--sizes", "4K,64K", "-n", "5", "--no-membw", "-q")


def test_report_names_the_collective_and_groups_by_the_size_asked(campaign, tmp_path):
    out = tmp_path / "report"
    text = report_text(campaign, out)
    assert "## all-gather across points" in text and "Allreduce" not in text
    with h5py.File(campaign / "cp_N1_t3_c1.h5") as f:
        assert f.attrs["kind"] == b"collective" and f.attrs["library_call"] == b"MPI_Allgather"
        assert sorted(set(f["summary/bytes"][()])) == [4092, 65532]  # rounded down to 3 ranks
    # one ratio table per size asked, not one per rank count's rounded bytes
    assert text.count("#### Ratio to MPI_Allgather at") == 2
    assert "#### Ratio to MPI_Allgather at 4K" in text and "#### Ratio to MPI_Allgather at 64K" in text
    figures = {p.name for p in (out / "figures").rglob("*.png")}
    assert any("latency" in f for f in figures) and any("busbw" in f for f in figures)


def test_compare_matches_the_passes_cases(campaign, tmp_path):
    proc = run_cli("compare", str(campaign / "cp_N1_t2_c1_p1.h5"), str(campaign / "cp_N1_t2_c1_p2.h5"))
    assert proc.returncode == 0, proc.stderr
    with h5py.File(campaign / "cp_N1_t2_c1_p1.h5") as f:
        cases = len(f["summary/algorithm"])
    m = re.search(r"Summary: (\d+) regression\(s\), (\d+) improvement\(s\), (\d+) within noise, (\d+) with too few "
                  r"samples, (\d+) unmatched", proc.stdout)
    assert m, proc.stdout
    assert sum(int(g) for g in m.groups()[:4]) == cases and m.group(5) == "0"
