"""Trainer traces' timeline (Chrome trace events): per rank the step phases and the bucket allreduces.

Real traces from the ``train_campaign`` fixture (``--overlap auto``: progress mode on this machine's
one-core ranks); ``check_train_timeline`` also checks the none-mode run of test_train_modes.py.
"""
from __future__ import annotations

import dataclasses
import json
from collections import defaultdict

import pandas as pd
import pytest

from scaleprobe_analysis import train, train_timeline
from scaleprobe_analysis.cli import main
from scaleprobe_analysis.trace import load_trace

TOL_US = 1e-3  # the timeline JSON rounds ts/dur to 0.1 ns


def timeline_tracks(events, nranks):
    """{rank: (main tid, [bucket lane tids])} and every track's name, from the thread_name events."""
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    tracks = {}
    for rank in range(nranks):
        mine = sorted(t for t, n in names.items() if n.startswith(f"rank {rank} "))
        assert "main thread: step phases" in names[mine[0]]
        tracks[rank] = (mine[0], mine[1:])
    assert sorted(names) == list(range(len(names)))  # tids 0..n-1, rank by rank
    return tracks, names


def assert_properly_nested(complete):
    """No two complete events of one track overlap partially (viewers drop such events)."""
    by_tid = defaultdict(list)
    for e in complete:
        by_tid[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_tid.values():
        open_ends = []
        for start, end in sorted(spans, key=lambda x: (x[0], -x[1])):
            while open_ends and open_ends[-1] <= start + TOL_US:
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1] + TOL_US, "partially overlapping events on one track"
            open_ends.append(end)


def check_train_timeline(path, tmp_path, capsys):
    """Export one trainer trace's timeline and check its tracks, events, clocks and flows for the trace's mode."""
    trace = load_trace(path)
    mode, nranks = trace.attrs["overlap_mode"], trace.nranks
    out = tmp_path / "train.json"
    assert main(["timeline", str(path), "-o", str(out)]) == 0
    assert train.timeline_note(trace) in capsys.readouterr().out
    events = json.loads(out.read_text())["traceEvents"]
    tracks, names = timeline_tracks(events, nranks)
    lanes = {tid: rank for rank, (_, mine) in tracks.items() for tid in mine}
    for rank, (main_tid, mine) in tracks.items():
        assert 1 <= len(mine) <= (2 if mode == "progress" else 1)  # progress: up to 2 buckets in flight at once
        for tid in mine:
            if mode == "thread":
                assert "communication thread" in names[tid]
            else:  # progress: advanced from the main thread; none: run on it in the wait
                assert "main thread" in names[tid] and "communication thread" not in names[tid]
                assert ("advanced from the main thread" if mode == "progress" else "run on the main thread") in names[tid]
    buckets = trace.table("buckets")
    complete = [e for e in events if e["ph"] == "X"]
    comm = [e for e in complete if e["tid"] in lanes]
    phases = [e for e in complete if e["tid"] not in lanes]
    assert {e["name"] for e in phases} <= {"data", "forward", "backward", "progress", "wait", "optimizer", "all_gather", "average"}
    assert ("progress" in {e["name"] for e in phases}) == (mode == "progress")
    assert_properly_nested(complete)
    assert len(comm) == len(buckets)
    for rank in range(nranks):  # one event per bucket row of the rank, named per bucket, start <= end
        mine = [e for e in comm if lanes[e["tid"]] == rank]
        rows = buckets[buckets["rank"] == rank]
        assert len(mine) == len(rows)
        assert all(e["name"] == f"bucket {e['args']['bucket']}" and e["dur"] >= 0 for e in mine)
        assert all(e["args"]["start_s"] <= e["args"]["end_s"] for e in mine)
        assert {(e["args"]["step"], e["args"]["bucket"]) for e in mine} == set(zip(rows["step"], rows["bucket"]))
        own = {tracks[rank][0], *tracks[rank][1]}
        assert min(e["ts"] for e in complete + [e for e in events if e["ph"] == "i"]
                   if e["tid"] in own) == pytest.approx(0, abs=TOL_US)
    # bucket and backward events of a step share the rank's clock: offsets agree with the trace
    rank_of_main = {main_tid: rank for rank, (main_tid, _) in tracks.items()}
    backward = {(rank_of_main[e["tid"]], e["args"]["step"]): e for e in phases if e["name"] == "backward"}
    samples = trace.table("samples")
    bw_phase = list(trace.table("phases")["name"]).index("backward")
    bw_start = samples[samples["phase"] == bw_phase].set_index(["rank", "iteration"])["start_s"]
    for e in comm[:50]:
        key = (lanes[e["tid"]], e["args"]["step"])
        expected = (e["args"]["start_s"] - bw_start[key]) * 1e6
        assert e["ts"] - backward[key]["ts"] == pytest.approx(expected, abs=2 * TOL_US)
        assert e["dur"] == pytest.approx((e["args"]["end_s"] - e["args"]["start_s"]) * 1e6, abs=TOL_US)
    if mode == "progress":  # the step's progress sample drawn right after backward's own time
        progress = {(e["tid"], e["args"]["step"]): e for e in phases if e["name"] == "progress"}
        for (tid, step), p in progress.items():
            bw = next(e for e in phases if e["name"] == "backward" and e["tid"] == tid and e["args"]["step"] == step)
            assert p["ts"] == pytest.approx(bw["ts"] + bw["dur"], abs=2 * TOL_US)
    ready = [e for e in events if e["ph"] == "i"]
    assert len(ready) == len(buckets) and all(e["name"].endswith(" ready") for e in ready)
    flows = defaultdict(dict)
    for e in events:
        if e["ph"] in "sf" and len(e["ph"]) == 1:
            flows[e["id"]][e["ph"]] = e
    assert len(flows) == len(buckets)
    for pair in flows.values():  # from the main thread at readiness to the allreduce on its rank's bucket track
        rank = lanes[pair["f"]["tid"]]
        assert pair["s"]["tid"] == tracks[rank][0] and pair["s"]["ts"] <= pair["f"]["ts"] + TOL_US


def test_timeline_has_per_rank_bucket_events(train_campaign, tmp_path, capsys):
    check_train_timeline(train_campaign / "strong" / "np3.h5", tmp_path, capsys)


def test_timeline_cap_keeps_whole_steps_with_their_buckets(train_campaign, tmp_path, capsys):
    path = train_campaign / "strong" / "np2.h5"
    samples = load_trace(path).table("samples")
    per_step = samples.groupby("iteration").size()
    cap = int(per_step.iloc[:3].sum())  # exactly the first three steps fit
    out = tmp_path / "capped.json"
    assert main(["timeline", str(path), "-o", str(out), "--max-events", str(cap)]) == 0
    assert f"kept {cap} of {len(samples)} samples" in capsys.readouterr().err
    events = [e for e in json.loads(out.read_text())["traceEvents"] if e["ph"] == "X"]
    assert {e["args"]["step"] for e in events} == set(per_step.index[:3])
    assert len(events) == cap


def test_buckets_in_flight_at_once_get_a_second_track(train_campaign):
    trace = load_trace(train_campaign / "strong" / "np2.h5")
    buckets = pd.DataFrame({"rank": [0, 0, 0, 0, 1], "start_s": [0.0, 1.0, 2.0, 5.0, 0.0],
                            "end_s": [3.0, 2.0, 4.0, 6.0, 1.0]})
    progress = dataclasses.replace(trace, attrs={**trace.attrs, "overlap_mode": "progress"})
    lanes, count = train_timeline.bucket_lanes(progress, buckets)
    assert list(lanes) == [0, 1, 1, 0, 0] and count == 2
    thread = dataclasses.replace(trace, attrs={**trace.attrs, "overlap_mode": "thread"})
    assert train_timeline.bucket_lanes(thread, buckets)[1] == 1  # the communication thread: one track, as recorded


def test_a_streamed_bucket_has_no_arrow_back_in_time(train_campaign):
    """shm-seg's streamed buckets start before backward finished them: flagged, queued 0, no flow arrow."""
    trace = load_trace(train_campaign / "strong" / "np2.h5")
    buckets = trace.table("buckets").copy()
    first = buckets.index[0]
    buckets.loc[first, "start_s"] = buckets.loc[first, "ready_s"] - 1e-3  # as a streamed bucket records it
    streamed = dataclasses.replace(trace, tables={**trace.tables, "buckets": buckets})
    events = train_timeline.timeline_events(streamed, 0, streamed.table("samples"))
    spans = [e for e in events if e["ph"] == "X" and e["cat"] == "bucket_allreduce"]
    flagged = [e for e in spans if e["args"].get("streamed")]
    assert len(flagged) == 1 and flagged[0]["args"]["queued_us"] == 0
    assert all(e["args"]["queued_us"] >= 0 for e in spans)
    flows = [e for e in events if e["ph"] in ("s", "f")]
    assert len(flows) == 2 * (len(spans) - 1)  # every other bucket keeps its arrow
