"""The report's reasons to distrust a trace (report.warnings_for): wrong elements, and simulated
cases that ran timing only on SMPI shared buffers (collectives/transports/timing_only.hpp)."""
from __future__ import annotations

import numpy as np
from helpers import edit_h5
from scaleprobe_analysis.report import warnings_for
from scaleprobe_analysis.trace import load_trace
from synthetic import write_allreduce_trace

CASE = {"algorithm": "ring", "dtype": "f32", "op": "sum", "placement": "out", "bytes": 1 << 20}


def _trace(tmp_path, **attrs):
    path = write_allreduce_trace(tmp_path / "t.h5", [CASE], [np.full((2, 3), 1e-4)])
    with edit_h5(path) as f:
        for key, value in attrs.items():
            f.attrs[key] = np.int64(value)
    return load_trace(path)


def test_clean_trace_has_no_warning(tmp_path):
    assert warnings_for(_trace(tmp_path)) == []


def test_timing_only_cases_are_named(tmp_path):
    notes = warnings_for(_trace(tmp_path, timing_only_cases=3))
    assert len(notes) == 1 and notes[0].startswith("3 case(s) ran timing only") and "not verified" in notes[0]


def test_wrong_elements_are_named(tmp_path):
    notes = warnings_for(_trace(tmp_path, wrong_elements=7))
    assert notes == ["7 wrong elements in verification: some results are incorrect."]
