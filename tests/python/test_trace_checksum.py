"""The Python reader verifies the Fletcher32 checksums of every column (since schema version 2,
through h5py) and still reads version-1 traces, which carry none. A flipped byte is first caught
by the whole-file digest (test_trace_digest.py); re-stamping the digest over the flip shows the
checksums beneath still catch it."""
from __future__ import annotations

import shutil
from pathlib import Path

import h5py
import pytest

from scaleprobe_analysis import digest
from scaleprobe_analysis.trace import SCHEMA_VERSION, TraceError, load_trace
from helpers import edit_h5

REPO = Path(__file__).resolve().parents[2]
OLD_TRACE = REPO / "tests" / "data" / "schema1-allreduce.h5"  # tests/data/README.md


def _flip_in_column(src: Path, dst: Path, column: str) -> None:
    shutil.copyfile(src, dst)
    with h5py.File(dst, "r") as f:
        ds = f[column]
        assert ds.fletcher32 and ds.chunks, f"{column} carries no checksum"
        info = ds.id.get_chunk_info(0)
        base = f.userblock_size  # HDF5's addresses start after the user block (the digest)
    where = base + info.byte_offset + info.size // 2
    with open(dst, "r+b") as raw:
        raw.seek(where)
        old = raw.read(4)
        raw.seek(where)
        raw.write(bytes(b ^ 0xA5 for b in old))
    digest.restamp(dst)  # past the whole-file digest, to the column's own checksum


def test_fresh_trace_is_checksummed_and_loads(allreduce_trace):
    trace = load_trace(allreduce_trace)
    assert trace.attrs["schema_version"] == SCHEMA_VERSION == 3
    with h5py.File(allreduce_trace, "r") as f:
        for name, group in f.items():
            if name == "provenance":
                continue
            for col, ds in group.items():
                assert ds.size == 0 or ds.fletcher32, f"{name}/{col} has no checksum"


@pytest.mark.parametrize("column", ["samples/wall_s", "summary/algorithm", "samples/rank"])
def test_flipped_bytes_are_refused_with_one_line(allreduce_trace, tmp_path, column):
    bad = tmp_path / "flipped.h5"
    _flip_in_column(allreduce_trace, bad, column)
    with pytest.raises(TraceError) as info:
        load_trace(bad)
    table, col = column.split("/")
    assert str(info.value) == f"{bad}: table '{table}' column '{col}' fails its Fletcher32 checksum (corrupt)"


def test_old_trace_without_checksums_still_loads():
    trace = load_trace(OLD_TRACE)
    assert trace.attrs["schema_version"] == 1
    assert len(trace.tables["samples"]) > 0


def test_checksum_stripped_from_a_version_2_column_is_refused(allreduce_trace, tmp_path):
    bad = tmp_path / "stripped.h5"
    shutil.copyfile(allreduce_trace, bad)
    with edit_h5(bad) as f:
        values = f["summary/t_mean_us"][()]
        attrs = dict(f["summary/t_mean_us"].attrs)
        del f["summary/t_mean_us"]
        f["summary"].create_dataset("t_mean_us", data=values)  # no fletcher32
        f["summary/t_mean_us"].attrs.update(attrs)
    with pytest.raises(TraceError, match="column 't_mean_us' has no checksum"):
        load_trace(bad)
