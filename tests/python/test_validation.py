"""Bad files are refused, each with a one-line '<file>: <problem>' message."""
from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from helpers import ALLREDUCE_ALGORITHMS, ALLREDUCE_SIZES, edit_h5
from scaleprobe_analysis.campaign import load_campaign
from scaleprobe_analysis.trace import TraceError, load_trace

SUMMARY_ROWS = len(ALLREDUCE_SIZES.split(",")) * len(ALLREDUCE_ALGORITHMS)


def _copy(src: Path, dst: Path) -> Path:
    shutil.copyfile(src, dst)
    return dst


def truncated(src, tmp):
    data = src.read_bytes()
    dst = tmp / "truncated.h5"
    dst.write_bytes(data[: len(data) // 2])
    return dst


def random_bytes(src, tmp):
    dst = tmp / "random.h5"
    dst.write_bytes(random.Random(0).randbytes(8192))
    return dst


def with_root_attr(name, value):
    def make(src, tmp):
        dst = _copy(src, tmp / f"{name}-{value}.h5")
        with edit_h5(dst) as f:
            f.attrs[name] = value
        return dst
    make.__name__ = f"{name}_{value.decode() if isinstance(value, bytes) else value}"
    return make


def partial_name(src, tmp):
    return _copy(src, tmp / "run.h5.partial")


def missing(src, tmp):
    return tmp / "does-not-exist.h5"


def short_column(src, tmp):
    dst = _copy(src, tmp / "short-column.h5")
    with edit_h5(dst) as f:
        values = f["summary/t_mean_us"][:3]
        del f["summary/t_mean_us"]
        f["summary"].create_dataset("t_mean_us", data=values)
    return dst


def no_schema(src, tmp):
    dst = _copy(src, tmp / "no-schema.h5")
    with edit_h5(dst) as f:
        del f.attrs["schema"]
    return dst


BROKEN = [
    (truncated, "corrupt: truncated"),
    (random_bytes, "not a readable HDF5 file (corrupt or truncated)"),
    (with_root_attr("complete", np.int64(0)), "incomplete trace (complete=0: the run did not finish writing it)"),
    (with_root_attr("schema_version", np.int64(99)),
     "unsupported trace schema version 99 (this reader reads versions 1 to 3)"),
    (with_root_attr("schema", np.bytes_(b"other-trace")),
     "not a scaleprobe trace (schema='other-trace', expected 'scaleprobe-trace')"),
    (no_schema, "not a scaleprobe trace (no schema attribute, expected 'scaleprobe-trace')"),
    (partial_name, "incomplete trace (a run still writing it, or one that died)"),
    (missing, "trace file not found"),
    (short_column, f"table 'summary' column 't_mean_us' has 3 rows, expected {SUMMARY_ROWS}"),
]


@pytest.mark.parametrize("make, problem", BROKEN, ids=[m.__name__ for m, _ in BROKEN])
def test_broken_file_refused_with_one_line(make, problem, allreduce_trace, tmp_path):
    bad = make(allreduce_trace, tmp_path)
    with pytest.raises(TraceError) as info:
        load_trace(bad)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{bad}: ")
    assert message == f"{bad}: {problem}" or message.startswith(f"{bad}: {problem}: ")
    assert info.value.path == str(bad)


def test_intact_copy_still_loads(allreduce_trace, tmp_path):
    """Control for the cases above: copying alone does not break a trace."""
    assert load_trace(_copy(allreduce_trace, tmp_path / "copy.h5")).kind == "allreduce"


def test_campaign_refuses_bad_member(campaign_dir, tmp_path):
    camp = shutil.copytree(campaign_dir, tmp_path / "camp")
    bad = random_bytes(None, camp / "sweep")
    with pytest.raises(TraceError) as info:
        load_campaign(camp)
    assert str(info.value).startswith(f"{bad}: not a readable HDF5 file")


def test_campaign_refuses_partial(campaign_dir, tmp_path):
    camp = shutil.copytree(campaign_dir, tmp_path / "camp")
    partial = _copy(camp / "allreduce.h5", camp / "sweep" / "late.h5.partial")
    with pytest.raises(TraceError, match="incomplete trace") as info:
        load_campaign(camp)
    assert info.value.path == str(partial)


def test_campaign_empty_or_missing(tmp_path):
    with pytest.raises(TraceError, match="no \\*.h5 traces"):
        load_campaign(tmp_path)
    with pytest.raises(TraceError, match="campaign directory not found"):
        load_campaign(tmp_path / "nope")
