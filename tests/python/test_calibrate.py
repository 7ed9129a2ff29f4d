"""A simulated link calibrated from measured allreduce timings (scaleprobe_analysis.calibrate).

Measured ring: α = 3 µs, 1/β = 4 GB/s, over three passes with ±2 % noise that cancels in the
median; simulated on the reference link (1 µs, 1 GB/s): t = 2 µs + n / (1 GB/s). The calibrated
link must be 1.5 µs and 4 GB/s, and the refusals (unlike rank counts, a reference run over both
kinds of link or on a topology other than flat, a reference without the platform's numbers, a
"measured" trace that was simulated)
must each name their problem.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scaleprobe_analysis.calibrate import CalibrationError, calibrate

SIZES = 2.0 ** np.arange(10, 25)


class FakeTrace:
    """What calibrate reads of a Trace: simulated, nranks, env and the summary table."""

    def __init__(self, times_us, simulated=False, nranks=2, env=None):
        self.simulated, self.nranks, self.env = simulated, nranks, env or {}
        self._summary = pd.DataFrame({"algorithm": "ring", "bytes": SIZES, "p50_us": times_us})

    def table(self, name):
        assert name == "summary"
        return self._summary


def reference_env(nodes=1, per_node=2):
    return {"SCALEPROBE_SIM_NODES": str(nodes), "SCALEPROBE_SIM_RANKS_PER_NODE": str(per_node),
            "SCALEPROBE_SIM_NODE_LATENCY": "1e-06", "SCALEPROBE_SIM_NODE_BANDWIDTH": "1e9",
            "SCALEPROBE_SIM_LINK_LATENCY": "1e-06", "SCALEPROBE_SIM_LINK_BANDWIDTH": "1e9"}


def measured_passes():
    exact = 3.0 + SIZES / 4e3
    return [FakeTrace(exact * f) for f in (0.98, 1.0, 1.02)]


def test_recovers_the_link_that_reproduces_the_measured_times():
    reference = FakeTrace(2.0 + SIZES / 1e3, simulated=True, env=reference_env())
    c = calibrate(measured_passes(), reference)
    assert c.link == "node"
    assert c.latency_s == pytest.approx(1.5e-6, rel=1e-6)
    assert c.bandwidth_Bps == pytest.approx(4e9, rel=1e-6)
    assert c.flags() == "--node-latency 1.5us --node-bandwidth 4GBps"


def test_one_rank_per_node_calibrates_the_host_links():
    reference = FakeTrace(2.0 + SIZES / 1e3, simulated=True, env=reference_env(nodes=2, per_node=1))
    assert calibrate(measured_passes(), reference).flags().startswith("--link-latency 1.5us")


@pytest.mark.parametrize("change, message", [
    ({"nranks": 4}, "calibrate like for like"),
    ({"env": reference_env(nodes=2, per_node=2)}, "both kinds of link"),
    ({"env": {}}, "SCALEPROBE_SIM_NODES"),
    ({"env": reference_env() | {"SCALEPROBE_SIM_TOPOLOGY": "torus"}}, "topology is torus"),
    ({"simulated": False}, "not simulated"),
])
def test_refusals_name_the_problem(change, message):
    args = {"simulated": True, "nranks": 2, "env": reference_env()} | change
    reference = FakeTrace(2.0 + SIZES / 1e3, **args)
    with pytest.raises(CalibrationError, match=message):
        calibrate(measured_passes(), reference)


def test_a_simulated_trace_is_not_a_measurement():
    reference = FakeTrace(2.0 + SIZES / 1e3, simulated=True, env=reference_env())
    with pytest.raises(CalibrationError, match="'measured' trace is simulated"):
        calibrate([FakeTrace(3.0 + SIZES / 4e3, simulated=True)], reference)
