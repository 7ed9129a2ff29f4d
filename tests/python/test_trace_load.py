"""Loading real traces: every table becomes a DataFrame of the right shape, strings decoded."""
from __future__ import annotations

import h5py
import pytest

from helpers import (ALLREDUCE_ALGORITHMS, ALLREDUCE_ITERS, ALLREDUCE_SIZES, BUCKET_ALGORITHMS, BUCKET_CAPS,
                     BUCKET_ITERS, NRANKS, TINY_LAYOUT)
from scaleprobe_analysis.campaign import load_campaign
from scaleprobe_analysis.trace import load_trace

N_SIZES = len(ALLREDUCE_SIZES.split(","))
N_TENSORS = len(TINY_LAYOUT.splitlines())


def test_allreduce_tables_and_shapes(allreduce_trace):
    t = load_trace(allreduce_trace)
    assert t.kind == "allreduce" and t.nranks == NRANKS and not t.simulated
    assert set(t.tables) == {"phases", "ranks", "samples", "summary"}
    summary = t.tables["summary"]
    assert len(summary) == N_SIZES * len(ALLREDUCE_ALGORITHMS)
    assert list(summary["case"]) == list(range(len(summary)))
    assert set(summary["algorithm"]) == set(ALLREDUCE_ALGORITHMS)
    assert sorted(set(summary["bytes"])) == [8, 256, 4096, 65536]
    assert (summary["iters"] == ALLREDUCE_ITERS).all()
    # per_rank samples: every timed iteration of every case on every rank
    samples = t.tables["samples"]
    assert len(samples) == NRANKS * len(summary) * ALLREDUCE_ITERS
    assert list(samples.columns[:1]) == ["rank"]  # per-rank tables lead with the rank column
    assert sorted(set(samples["rank"])) == list(range(NRANKS))
    assert (samples["wall_s"] > 0).all()
    assert len(t.tables["ranks"]) == NRANKS
    assert (summary["wrong"] == 0).all() and t.attrs["wrong_elements"] == 0


def test_columns_in_creation_order_and_match_rows_attribute(allreduce_trace):
    t = load_trace(allreduce_trace)
    with h5py.File(allreduce_trace) as f:
        for name, frame in t.tables.items():
            assert list(frame.columns) == list(f[name])  # h5py lists links in creation order
            assert len(frame) == f[name].attrs["rows"]
    # the schema documents summary's column order; spot-check its start
    assert list(t.tables["summary"].columns[:6]) == ["case", "algorithm", "dtype", "op", "placement", "bytes"]


def test_strings_and_attributes_are_decoded(allreduce_trace):
    t = load_trace(allreduce_trace)
    assert all(isinstance(a, str) for a in t.tables["summary"]["algorithm"])
    assert all(isinstance(h, str) for h in t.tables["ranks"]["host"])
    assert isinstance(t.attrs["schema"], str) and t.attrs["schema"] == "scaleprobe-trace"
    assert isinstance(t.attrs["nranks"], int) and isinstance(t.attrs["busbw_factor"], float)
    assert t.machine and isinstance(t.machine, str)
    for key in ("hosts", "mpi_library_version", "git_revision", "command_line", "load_average_start"):
        assert isinstance(t.provenance[key], str) and t.provenance[key]
    assert "allreduce_perf" in t.provenance["command_line"]
    assert t.memory_copy_GBps() is not None and t.memory_copy_GBps() > 0
    assert t.meta["summary"].units["t_mean_us"] == "us"
    assert t.meta["samples"].scope == "per_rank" and t.meta["summary"].scope == "shared"


def test_bucket_sweep_tables(bucket_trace):
    t = load_trace(bucket_trace)
    assert t.kind == "bucket_sweep"
    assert {"summary", "samples", "buckets", "layout", "phases", "ranks"} <= set(t.tables)
    summary = t.tables["summary"]
    assert len(summary) == len(BUCKET_ALGORITHMS) * len(BUCKET_CAPS)
    assert list(dict.fromkeys(summary["cap"])) == BUCKET_CAPS
    assert len(t.tables["layout"]) == N_TENSORS
    # 'tensor' = one bucket per tensor, 'all' = a single bucket
    per_cap = summary.drop_duplicates("cap").set_index("cap")["buckets"]
    assert per_cap["tensor"] == N_TENSORS and per_cap["all"] == 1
    assert len(t.tables["buckets"]) == summary["buckets"].sum()
    assert list(t.tables["phases"]["name"]) == ["iteration", "bucket_allreduce"]
    iterations = t.tables["samples"].query("phase == 0")
    assert len(iterations) == NRANKS * len(summary) * BUCKET_ITERS
    assert t.memory_copy_GBps() is None  # bucket_sweep does not run the copy probe


def test_load_campaign_recursive(campaign_dir, allreduce_trace, bucket_trace):
    campaign = load_campaign(campaign_dir)
    assert [t.path for t in campaign.traces] == sorted([allreduce_trace, bucket_trace])
    assert [t.kind for t in campaign.of_kind("bucket_sweep")] == ["bucket_sweep"]


def test_table_accessor_names_file(allreduce_trace):
    t = load_trace(allreduce_trace)
    with pytest.raises(Exception, match="no 'buckets' table"):
        t.table("buckets")
