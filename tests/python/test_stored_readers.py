"""scaleprobe_analysis.stored, the readers the stored campaigns' summarize scripts share, on stored
traces: step_replay traces in order of rank count with their cases, errors grouped per trace over
passes, a profiled trainer's kernels per step. Expected values are read with h5py."""
from __future__ import annotations

import h5py
import pytest

from helpers import REPO
from scaleprobe_analysis import stored

REPLAY = REPO / "results" / "2026-11-28-vm-f6m207-step-replay" / "sim"
PROFILED = REPO / "results" / "2026-11-28-vm-f6m207-gemm-onednn" / "raw"


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


def test_kernel_ms_per_step_puts_the_step_first():
    path = sorted(PROFILED.glob("gpt-*.h5"))[0]
    with h5py.File(path) as f:
        ms = stored.kernel_ms_per_step(f)
        k = f["kernels"]
        assert list(ms)[0] == "(step)"
        assert ms["(step)"] == pytest.approx(float(k["step_wall_s"][0]) / int(k["steps"][0]) * 1e3)
        assert len(ms) == 1 + len(k["kernel"])
