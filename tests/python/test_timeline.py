"""timeline: Chrome trace-event JSON from real traces (tracks, counts, durations, nesting, cap)."""
from __future__ import annotations

import json
from collections import defaultdict

import pytest

from helpers import NRANKS
from scaleprobe_analysis.cli import main
from scaleprobe_analysis.timeline import cap_samples
from scaleprobe_analysis.trace import load_trace

TOL_US = 1e-3  # JSON rounds ts/dur to 0.1 ns


def export(trace_path, tmp_path, *extra):
    out = tmp_path / "timeline.json"
    assert main(["timeline", str(trace_path), "-o", str(out), *extra]) == 0
    doc = json.loads(out.read_text())
    return doc, [e for e in doc["traceEvents"] if e["ph"] == "X"]


def test_allreduce_timeline(allreduce_trace, tmp_path, capsys):
    doc, events = export(allreduce_trace, tmp_path)
    samples = load_trace(allreduce_trace).table("samples")
    assert len(events) == len(samples)
    assert {e["tid"] for e in events} == set(range(NRANKS)) and {e["pid"] for e in events} == {0}
    names = {e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names == {f"rank {r} (own clock, first sample at 0)" for r in range(NRANKS)}
    assert {e["name"] for e in events} == {"allreduce"}
    for rank in range(NRANKS):  # every track aligned to its own first sample
        assert min(e["ts"] for e in events if e["tid"] == rank) == 0
    by_key = {(r.rank, r.case, r.iteration): r for r in samples.itertuples()}
    for e in events:
        a = e["args"]
        row = by_key[(e["tid"], a["case"], a["iteration"])]
        assert e["dur"] == pytest.approx(row.wall_s * 1e6, abs=TOL_US)
        assert a["wall_s"] == row.wall_s and a["cpu_s"] == row.cpu_s and a["bucket"] == -1
        assert {"algorithm", "dtype", "bytes", "size"} <= set(a)
    assert "never comparable across ranks" in doc["otherData"]["clocks"]
    assert doc["otherData"]["traces"][0]["dropped"] == ""
    assert "never comparable across ranks" in capsys.readouterr().out


def test_bucket_events_nest_in_their_iteration(bucket_trace, tmp_path):
    _, events = export(bucket_trace, tmp_path)
    samples = load_trace(bucket_trace).table("samples")
    assert len(events) == len(samples)
    assert {e["tid"] for e in events} == set(range(NRANKS))
    iterations = {}
    buckets = defaultdict(list)
    for e in events:
        a = e["args"]
        key = (e["tid"], a["case"], a["iteration"])
        if a["bucket"] < 0:
            assert e["name"] == "iteration" and key not in iterations
            iterations[key] = e
        else:
            assert e["name"] == f"bucket {a['bucket']}" and e["cat"] == "bucket_allreduce"
            buckets[key].append(e)
        assert {"algorithm", "cap"} <= set(a)
    assert set(buckets) == set(iterations)
    for key, inner in buckets.items():
        outer = iterations[key]
        for b in inner:
            assert outer["ts"] - TOL_US <= b["ts"] and b["ts"] + b["dur"] <= outer["ts"] + outer["dur"] + TOL_US
        assert sum(b["dur"] for b in inner) <= outer["dur"] + TOL_US


def test_cap_keeps_whole_iterations_and_says_what_was_dropped(bucket_trace, tmp_path, capsys):
    samples = load_trace(bucket_trace).table("samples")
    group_size = samples.groupby(["case", "iteration"]).size().to_dict()  # rows of one iteration, all ranks
    cap = len(samples) // 2
    doc, events = export(bucket_trace, tmp_path, "--max-events", str(cap))
    assert 0 < len(events) <= cap
    err = capsys.readouterr().err
    assert f"kept {len(events)} of {len(samples)} samples" in err and f"dropped the other {len(samples) - len(events)}" in err
    assert doc["otherData"]["traces"][0]["exported"] == len(events)
    assert {e["args"]["case"] for e in events} == set(samples["case"])  # iteration 0 of every case first
    groups = defaultdict(int)
    for e in events:
        groups[(e["args"]["case"], e["args"]["iteration"])] += 1
    assert all(n == group_size[key] for key, n in groups.items())  # no iteration cut in half


def test_cap_order_and_message():
    import pandas as pd
    s = pd.DataFrame({"rank": [0] * 6, "case": [0, 0, 0, 1, 1, 1], "iteration": [0, 1, 2, 0, 1, 2],
                      "start_s": range(6), "wall_s": [1.0] * 6})
    assert cap_samples(s, 6).message is None
    capped = cap_samples(s, 3)
    assert sorted(zip(capped.samples["case"], capped.samples["iteration"])) == [(0, 0), (0, 1), (1, 0)]
    assert "iterations 0..0 of every case and iteration 1 of 1 of 2 cases" in capped.message
    assert cap_samples(s, 4).message.startswith("kept 4 of 6 samples (cap 4): timed iterations 0..1 of every case")


def test_campaign_one_process_per_trace(campaign_dir, tmp_path):
    out = tmp_path / "all.json"
    assert main(["timeline", str(campaign_dir), "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    procs = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    assert len(procs) == 2 and "allreduce" in procs[0] and "bucket_sweep" in procs[1]
    assert {e["pid"] for e in doc["traceEvents"] if e["ph"] == "X"} == {0, 1}


def test_help_states_the_clock_caveat(capsys):
    with pytest.raises(SystemExit):
        main(["timeline", "--help"])
    assert "never comparable across ranks" in " ".join(capsys.readouterr().out.split())
