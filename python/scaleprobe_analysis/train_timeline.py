"""A train trace's timeline: per rank the main thread's step phases and a track of bucket allreduces.

The kind's entry is ``train.py`` (``timeline_events``, ``case_args``, ``timeline_note`` are its
registry functions; ``timeline.py`` writes the Chrome trace-event file). The allreduces' track is
the communication thread's (older traces, thread mode), or in progress and none mode the
allreduces the main thread advanced (progress mode: two tracks when two buckets were in flight at
once); none for a run without buckets (``--no-comm``, local SGD).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .trace import Trace
from .train_report import has_modes

TIMELINE_NOTE = "train: main and communication thread per rank"  # older traces (timeline_note)


def timeline_note(trace: Trace) -> str:
    """The timeline command's note on this trace's tracks (``TIMELINE_NOTE`` for older traces)."""
    if not has_modes(trace):
        return TIMELINE_NOTE
    if "buckets" not in trace.tables:
        return "train: main thread per rank (no bucket allreduces)"
    mode = trace.attrs["overlap_mode"]
    if mode == "thread":
        return TIMELINE_NOTE
    if mode == "none":
        return "train: main thread and its bucket allreduces (none mode: run on the main thread in the wait) per rank"
    return "train: main thread and its bucket allreduces (progress mode: advanced from the main thread) per rank"


def case_args(trace: Trace) -> dict[int, dict]:
    if "cases" not in trace.tables:  # an older trace: one case, summary per phase
        return {}
    return {int(r["case"]): {"algorithm": r["algorithm"], "cap": r["bucket_cap"], "buckets": int(r["buckets"])}
            for r in trace.table("cases").to_dict("records")}


def bucket_lanes(trace: Trace, buckets: pd.DataFrame) -> tuple[np.ndarray, int]:
    """Per bucket row the lane its allreduce is drawn on, and the lanes per rank (at least 1).

    Older traces and thread mode: one lane (the communication thread). Otherwise each bucket goes
    to the first lane free at its start, so buckets in flight at once (progress mode: up to 2)
    never overlap on one track.
    """
    lanes = np.zeros(len(buckets), dtype=int)
    if not has_modes(trace) or trace.attrs["overlap_mode"] == "thread" or buckets.empty:
        return lanes, 1
    ends: dict[int, list[float]] = {}
    order = np.lexsort((buckets["start_s"].to_numpy(), buckets["rank"].to_numpy()))
    rank, start, end = (buckets[c].to_numpy() for c in ("rank", "start_s", "end_s"))
    for i in order:
        free = ends.setdefault(int(rank[i]), [])
        lane = next((j for j, e in enumerate(free) if e <= start[i]), len(free))
        if lane == len(free):
            free.append(end[i])
        free[lane] = end[i]
        lanes[i] = lane
    return lanes, max(1, int(lanes.max()) + 1)


def _lane_name(trace: Trace, rank: int, lane: int) -> str:
    """What a rank's bucket lane shows: the communication thread, or allreduces advanced from the main thread."""
    mode = trace.attrs.get("overlap_mode", "thread")
    if mode == "progress":
        which = "bucket allreduces" if lane == 0 else f"bucket allreduces in flight at once, #{lane + 1}"
        return f"rank {rank} {which} (advanced from the main thread; rank {rank}'s clock)"
    if mode == "none":
        return f"rank {rank} bucket allreduces (run on the main thread in the wait, no overlap; rank {rank}'s clock)"
    return f"rank {rank} communication thread: bucket allreduces (rank {rank}'s clock)"


def timeline_events(trace: Trace, pid: int, samples: pd.DataFrame) -> list[dict] | None:
    """Per rank a track of phases and one of bucket allreduces (+ ready instants and flows).

    With L bucket lanes per rank, rank r's phases are on tid (1 + L)·r and its lanes on the next L
    tids: L = 1 for older traces and thread mode (tid 2r and 2r + 1, the communication thread),
    progress mode two when two buckets were in flight at once, none for a trace with the overlap
    modes but no ``buckets`` table (``--no-comm``, local SGD). The ``progress`` phase (progress
    mode: one sample per step, the sum of the calls spread through backward, recorded with
    backward's start) is drawn right after that backward's own time, where the two together end.

    ``samples``: the rows of the ``samples`` table to export (whole steps). None for a trace
    without the engine's ``iterations`` table (the standard one-track-per-rank layout then).
    """
    if "iterations" not in trace.tables:
        return None
    phases = list(trace.table("phases")["name"])
    s = samples
    # A bucket's sample: its allreduce, or under --shard its reduce-scatter (drawn on the bucket lanes).
    bucket_phases = [phases.index(p) for p in ("allreduce", "reduce_scatter") if p in phases]
    buckets = trace.tables.get("buckets", pd.DataFrame(columns=["rank", "step", "start_s", "ready_s"]))
    buckets = buckets[buckets["step"].isin(set(s["iteration"]))] if len(buckets) else buckets
    s = s[~s["phase"].isin(bucket_phases)]
    origin = pd.concat([s.groupby("rank")["start_s"].min(), buckets.groupby("rank")["ready_s"].min(),
                        buckets.groupby("rank")["start_s"].min()], axis=1).min(axis=1).to_dict()
    args_of = case_args(trace)
    lane_of, lanes = bucket_lanes(trace, buckets)
    if has_modes(trace) and "buckets" not in trace.tables:
        lanes = 0
    per = 1 + lanes  # tids per rank
    events = []
    for rank in range(trace.nranks):
        events += [{"ph": "M", "pid": pid, "tid": per * rank, "name": "thread_name",
                    "args": {"name": f"rank {rank} main thread: step phases (own clock, first event at 0)"}},
                   {"ph": "M", "pid": pid, "tid": per * rank, "name": "thread_sort_index",
                    "args": {"sort_index": per * rank}}]
        for lane in range(lanes):
            tid = per * rank + 1 + lane
            events += [{"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                        "args": {"name": _lane_name(trace, rank, lane)}},
                       {"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": tid}}]
    progress = phases.index("progress") if "progress" in phases else None
    backward_wall = {}  # (rank, step, start_s) → wall_s of a backward sample, for the progress sample beside it
    if progress is not None:
        bw = s[s["phase"] == phases.index("backward")]
        backward_wall = dict(zip(zip(bw["rank"], bw["iteration"], bw["start_s"]), bw["wall_s"]))
    timed = []  # (tid, ts, -dur, event): sorted so parents come before children
    for r in s.itertuples(index=False):
        phase = phases[r.phase] if 0 <= r.phase < len(phases) else f"phase {r.phase}"
        ts, dur = (r.start_s - origin[r.rank]) * 1e6, r.wall_s * 1e6
        args = {"case": int(r.case), "step": int(r.iteration), "wall_s": float(r.wall_s), "cpu_s": float(r.cpu_s),
                **args_of.get(int(r.case), {})}
        if "process_cpu_s" in s.columns and np.isfinite(r.process_cpu_s):
            args["process_cpu_s"] = float(r.process_cpu_s)
        if r.phase == progress and (r.rank, r.iteration, r.start_s) in backward_wall:
            ts += backward_wall[(r.rank, r.iteration, r.start_s)] * 1e6
            args["drawn"] = ("the sum of the calls that advanced the buckets from inside backward, drawn after "
                             "backward's own time (the calls were spread through it)")
        tid = per * int(r.rank)
        timed.append((tid, ts, -dur, {"ph": "X", "pid": pid, "tid": tid, "cat": phase, "name": phase,
                                      "ts": round(float(ts), 4), "dur": round(float(dur), 4), "args": args}))
    for k, (b, lane) in enumerate(zip(buckets.itertuples(index=False), lane_of)):
        o = origin[b.rank]
        ts, dur, ready = (b.start_s - o) * 1e6, (b.end_s - b.start_s) * 1e6, (b.ready_s - o) * 1e6
        name = f"bucket {int(b.bucket)}"
        args = {"case": int(b.case), "step": int(b.step), "bucket": int(b.bucket), **args_of.get(int(b.case), {}),
                "offset": int(b.offset), "numel": int(b.numel), "tensors": int(b.tensors),
                "ready_s": float(b.ready_s), "start_s": float(b.start_s), "end_s": float(b.end_s),
                "queued_us": float(max(0.0, b.start_s - b.ready_s) * 1e6), "wall_s": float(b.end_s - b.start_s),
                "cpu_s": float(b.cpu_s)}
        # A streamed bucket (the trace's buckets_stream) started before backward finished it: its
        # ready instant falls inside its span, and no arrow is drawn back in time.
        streamed = b.start_s < b.ready_s
        if streamed:
            args["streamed"] = True
        main, comm, flow = per * int(b.rank), per * int(b.rank) + 1 + int(lane), pid * 100_000_000 + k
        timed.append((comm, ts, -dur, {"ph": "X", "pid": pid, "tid": comm, "cat": "bucket_allreduce", "name": name,
                                       "ts": round(float(ts), 4), "dur": round(float(dur), 4), "args": args}))
        timed.append((comm, ready, 0.0, {"ph": "i", "s": "t", "pid": pid, "tid": comm, "cat": "bucket_ready",
                                         "name": f"{name} ready", "ts": round(float(ready), 4),
                                         "args": {"step": int(b.step), "bucket": int(b.bucket),
                                                  "queued_us": args["queued_us"]}}))
        if streamed:
            continue
        timed.append((main, ready, 0.0, {"ph": "s", "pid": pid, "tid": main, "cat": "bucket_ready", "id": flow,
                                         "name": f"{name} ready → allreduce", "ts": round(float(ready), 4)}))
        timed.append((comm, ts, 0.0, {"ph": "f", "bp": "e", "pid": pid, "tid": comm, "cat": "bucket_ready", "id": flow,
                                      "name": f"{name} ready → allreduce", "ts": round(float(ts), 4)}))
    timed.sort(key=lambda t: (t[0], t[1], t[2]))
    return events + [t[3] for t in timed]
