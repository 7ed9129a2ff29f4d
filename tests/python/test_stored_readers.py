"""scaleprobe_analysis.stored, the readers the stored campaigns' summarize scripts share, on stored
traces: step_replay traces in order of rank count with their cases, errors grouped per trace over
passes. Expected values are read with h5py."""
from __future__ import annotations

import h5py

from helpers import REPO
from scaleprobe_analysis import stored

REPLAY = REPO / "results" / "2026-11-28-vm-f6m207-step-replay" / "sim"


def test_replayed_orders_by_rank_count_and_reads_every_case():
    found = stored.replayed(str(REPLAY / "scale-*.h5"))
    assert [name for name, *_ in found] == ["16", "64", "256", "1024"]
    name, mode, ranks, cases = found[-1]
    with h5py.File(REPLAY / "scale-1024.h5") as f:
        assert (mode, ranks) == (f.attrs["overlap_mode"].decode(), int(f.attrs["nranks"]))
        assert [float(c["predicted_median_s"]) for c in cases] == [float(x) for x in f["cases/predicted_median_s"]]


def test_errors_are_grouped_per_trace_over_its_passes():
    like = stored.replayed(str(REPLAY / "like-*.h5"))
    errors = stored.errors_by_trace(like)
    assert list(errors) == ["gpt2-none", "gpt2-progress", "gpt4-progress"]
    assert sum(len(v) for v in errors.values()) == sum(len(cases) for *_, cases in like)

