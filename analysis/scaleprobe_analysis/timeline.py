"""Export traces as Chrome trace-event JSON (opens in https://ui.perfetto.dev and chrome://tracing).

Layout: one *process* (pid) per trace, one *thread* (tid) per rank, and every row of the
``samples`` table as a complete event (``"ph": "X"``) named after its phase (``allreduce``,
``iteration``) or ``bucket N`` for a bucket allreduce, with ``ts``/``dur`` in µs and
``args`` holding case, iteration, bucket, wall and cpu (seconds) plus the case's algorithm
and size (allreduce) or algorithm and cap (bucket_sweep). bucket_sweep's bucket events lie
inside their ``iteration`` event, so the viewers nest them.

**Clocks.** ``start_s`` is each rank's own monotonic clock; the schema says never to compare
it across ranks. Each rank's track is therefore shifted so its first exported sample starts
at 0: positions *within* a track are exact, but a horizontal line across tracks does not mean
"at the same time". The JSON says so in ``otherData`` and in each track's name.

**Size.** Viewers struggle above a few hundred thousand events, so at most ``max_events``
samples are written (shared equally among the traces of one file). Whole (case, iteration) groups, all ranks together, are kept in the order
iteration 0 of every case, then iteration 1 of every case, ...: every case stays visible,
iterations are never cut in half, and the message says exactly which iterations were dropped.

**Trainer traces** (kind ``train`` from the data-parallel engine) get *two* threads per rank:
``tid 2r`` is rank r's main thread with its step phases (data, forward, backward, wait,
optimizer, average, validation; every sample except the ``allreduce`` rows) and ``tid 2r+1``
its communication thread with one complete event ``bucket N`` per row of the ``buckets``
table (start → end; args step, case, algorithm, cap, offset, numel, tensors, ready_s,
queued_us = start − ready, cpu_s). Each bucket's moment of readiness (backward finished its
last gradient) is an instant event ``bucket N ready`` on the communication thread plus a flow
arrow from the main thread (inside ``backward``) to the allreduce, so Perfetto shows how the
allreduces overlap backward. Both threads of a rank share the rank's clock and origin. The
``--max-events`` cap counts samples (each bucket's allreduce is one) and keeps whole steps;
the ready instant and the two flow events of a bucket come on top.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .textfmt import format_bytes
from .trace import Trace

DEFAULT_MAX_EVENTS = 200_000
CLOCK_NOTE = ("start times are per-rank monotonic clocks, never comparable across ranks: each rank's "
              "track is shifted so its first sample starts at 0; compare positions within a track only")


@dataclass(frozen=True)
class Capped:
    """Which samples of one trace were kept: the rows and a message if any were dropped."""

    samples: pd.DataFrame
    total: int
    message: str | None


def cap_samples(samples: pd.DataFrame, max_events: int) -> Capped:
    """Keep whole (case, iteration) groups, iteration-major, while the total fits ``max_events``."""
    total = len(samples)
    if total <= max_events:
        return Capped(samples, total, None)
    sizes = samples.groupby(["iteration", "case"]).size()  # sorted: iteration-major
    fits = sizes.index[np.cumsum(sizes.to_numpy()) <= max_events]
    if len(fits) == 0:  # one iteration alone is too big: keep its first events
        first = sizes.index[0]
        part = samples[(samples["iteration"] == first[0]) & (samples["case"] == first[1])]
        kept = part.sort_values(["rank", "start_s"]).head(max_events)
        message = (f"kept {len(kept)} of {total} samples: only part of iteration {first[0]} of case {first[1]} "
                   f"fits the cap of {max_events}")
        return Capped(kept, total, message)
    kept = samples[pd.MultiIndex.from_frame(samples[["iteration", "case"]]).isin(fits)]
    last = int(fits[-1][0])  # the last iteration index kept
    cases_kept = int((fits.get_level_values(0) == last).sum())
    cases_all = int((sizes.index.get_level_values(0) == last).sum())
    if cases_kept == cases_all:
        which = f"timed iterations 0..{last} of every case"
    else:
        which = (f"timed iterations 0..{last - 1} of every case and iteration {last} of "
                 f"{cases_kept} of {cases_all} cases" if last > 0 else
                 f"iteration 0 of {cases_kept} of {cases_all} cases")
    message = (f"kept {len(kept)} of {total} samples (cap {max_events}): {which}; "
               f"dropped the other {total - len(kept)} samples")
    return Capped(kept, total, message)


def _case_args(trace: Trace) -> dict[int, dict]:
    """Per case, the summary fields that identify it in an event's args."""
    summary = trace.tables.get("summary")
    if trace.kind == "train" and "cases" in trace.tables:  # summary is per phase; cases names the case
        return {int(r["case"]): {"algorithm": r["algorithm"], "cap": r["bucket_cap"], "buckets": int(r["buckets"])}
                for r in trace.table("cases").to_dict("records")}
    if summary is None or "case" not in summary:  # e.g. an older train trace: one case, summary per phase
        return {}
    fields = (["algorithm", "dtype", "op", "placement", "bytes"] if trace.kind == "allreduce"
              else ["algorithm", "cap", "buckets"] if trace.kind == "bucket_sweep" else ["algorithm"])
    fields = [f for f in fields if f in summary]
    out = {}
    for row in summary.to_dict("records"):
        args = {f: (int(row[f]) if isinstance(row[f], (np.integer, int)) else row[f]) for f in fields}
        if "bytes" in args and trace.kind == "allreduce":
            args["size"] = format_bytes(args["bytes"])
        out[int(row["case"])] = args
    return out


def _train_events(trace: Trace, pid: int, capped: Capped) -> list[dict]:
    """Trainer trace: phases on tid 2r, bucket allreduces (+ ready instants and flows) on tid 2r+1."""
    phases = list(trace.table("phases")["name"])
    s = capped.samples
    allreduce = phases.index("allreduce") if "allreduce" in phases else -1
    buckets = trace.tables.get("buckets", pd.DataFrame(columns=["rank", "step", "start_s", "ready_s"]))
    buckets = buckets[buckets["step"].isin(set(s["iteration"]))] if len(buckets) else buckets
    s = s[s["phase"] != allreduce]
    origin = pd.concat([s.groupby("rank")["start_s"].min(), buckets.groupby("rank")["ready_s"].min(),
                        buckets.groupby("rank")["start_s"].min()], axis=1).min(axis=1).to_dict()
    case_args = _case_args(trace)
    events = []
    for rank in range(trace.nranks):
        events += [{"ph": "M", "pid": pid, "tid": 2 * rank, "name": "thread_name",
                    "args": {"name": f"rank {rank} main thread: step phases (own clock, first event at 0)"}},
                   {"ph": "M", "pid": pid, "tid": 2 * rank, "name": "thread_sort_index", "args": {"sort_index": 2 * rank}},
                   {"ph": "M", "pid": pid, "tid": 2 * rank + 1, "name": "thread_name",
                    "args": {"name": f"rank {rank} communication thread: bucket allreduces (rank {rank}'s clock)"}},
                   {"ph": "M", "pid": pid, "tid": 2 * rank + 1, "name": "thread_sort_index",
                    "args": {"sort_index": 2 * rank + 1}}]
    timed = []  # (tid, ts, -dur, event): sorted so parents come before children
    for r in s.itertuples(index=False):
        phase = phases[r.phase] if 0 <= r.phase < len(phases) else f"phase {r.phase}"
        ts, dur = (r.start_s - origin[r.rank]) * 1e6, r.wall_s * 1e6
        args = {"case": int(r.case), "step": int(r.iteration), "wall_s": float(r.wall_s), "cpu_s": float(r.cpu_s),
                **case_args.get(int(r.case), {})}
        if "process_cpu_s" in s.columns and np.isfinite(r.process_cpu_s):
            args["process_cpu_s"] = float(r.process_cpu_s)
        timed.append((2 * r.rank, ts, -dur, {"ph": "X", "pid": pid, "tid": 2 * int(r.rank), "cat": phase, "name": phase,
                                             "ts": round(float(ts), 4), "dur": round(float(dur), 4), "args": args}))
    for k, b in enumerate(buckets.itertuples(index=False)):
        o = origin[b.rank]
        ts, dur, ready = (b.start_s - o) * 1e6, (b.end_s - b.start_s) * 1e6, (b.ready_s - o) * 1e6
        name = f"bucket {int(b.bucket)}"
        args = {"case": int(b.case), "step": int(b.step), "bucket": int(b.bucket), **case_args.get(int(b.case), {}),
                "offset": int(b.offset), "numel": int(b.numel), "tensors": int(b.tensors),
                "ready_s": float(b.ready_s), "start_s": float(b.start_s), "end_s": float(b.end_s),
                "queued_us": float((b.start_s - b.ready_s) * 1e6), "wall_s": float(b.end_s - b.start_s),
                "cpu_s": float(b.cpu_s)}
        main, comm, flow = 2 * int(b.rank), 2 * int(b.rank) + 1, pid * 100_000_000 + k
        timed.append((comm, ts, -dur, {"ph": "X", "pid": pid, "tid": comm, "cat": "bucket_allreduce", "name": name,
                                       "ts": round(float(ts), 4), "dur": round(float(dur), 4), "args": args}))
        timed.append((comm, ready, 0.0, {"ph": "i", "s": "t", "pid": pid, "tid": comm, "cat": "bucket_ready",
                                         "name": f"{name} ready", "ts": round(float(ready), 4),
                                         "args": {"step": int(b.step), "bucket": int(b.bucket),
                                                  "queued_us": args["queued_us"]}}))
        timed.append((main, ready, 0.0, {"ph": "s", "pid": pid, "tid": main, "cat": "bucket_ready", "id": flow,
                                         "name": f"{name} ready → allreduce", "ts": round(float(ready), 4)}))
        timed.append((comm, ts, 0.0, {"ph": "f", "bp": "e", "pid": pid, "tid": comm, "cat": "bucket_ready", "id": flow,
                                      "name": f"{name} ready → allreduce", "ts": round(float(ts), 4)}))
    timed.sort(key=lambda t: (t[0], t[1], t[2]))
    return events + [t[3] for t in timed]


def trace_events(trace: Trace, pid: int, max_events: int = DEFAULT_MAX_EVENTS,
                 label: str | None = None) -> tuple[list[dict], Capped]:
    """The metadata and complete events of one trace as process ``pid``."""
    capped = cap_samples(trace.table("samples"), max_events)
    s = capped.samples
    phases = list(trace.table("phases")["name"])
    label = label or trace.name
    status = "SIMULATED/MODELLED" if trace.simulated else "measured"
    events = [{"ph": "M", "pid": pid, "name": "process_name",
               "args": {"name": f"{label}: {trace.kind}, {trace.nranks} ranks, {trace.machine} ({status})"}},
              {"ph": "M", "pid": pid, "name": "process_sort_index", "args": {"sort_index": pid}}]
    if trace.kind == "train" and "iterations" in trace.tables:  # data-parallel engine: two threads per rank
        return events + _train_events(trace, pid, capped), capped
    for rank in range(trace.nranks):
        events += [{"ph": "M", "pid": pid, "tid": rank, "name": "thread_name",
                    "args": {"name": f"rank {rank} (own clock, first sample at 0)"}},
                   {"ph": "M", "pid": pid, "tid": rank, "name": "thread_sort_index", "args": {"sort_index": rank}}]
    if s.empty:
        return events, capped
    origin = s.groupby("rank")["start_s"].transform("min")
    ts = ((s["start_s"] - origin) * 1e6).to_numpy()
    dur = (s["wall_s"] * 1e6).to_numpy()
    case_args = _case_args(trace)
    # parents before children at equal start: sort by rank, start, longest first
    order = np.lexsort((-dur, ts, s["rank"].to_numpy()))
    cols = {c: s[c].to_numpy() for c in ("rank", "case", "iteration", "phase", "bucket", "wall_s", "cpu_s")}
    for i in order:
        phase = phases[cols["phase"][i]] if 0 <= cols["phase"][i] < len(phases) else f"phase {cols['phase'][i]}"
        bucket = int(cols["bucket"][i])
        case = int(cols["case"][i])
        args = {"case": case, "iteration": int(cols["iteration"][i]), "bucket": bucket,
                "wall_s": float(cols["wall_s"][i]), "cpu_s": float(cols["cpu_s"][i]), **case_args.get(case, {})}
        events.append({"ph": "X", "pid": pid, "tid": int(cols["rank"][i]), "cat": phase,
                       "name": f"bucket {bucket}" if bucket >= 0 else phase,
                       "ts": round(float(ts[i]), 4), "dur": round(float(dur[i]), 4), "args": args})
    return events, capped


def write_timeline(traces: list[Trace], out: str | Path, max_events: int = DEFAULT_MAX_EVENTS,
                   labels: list[str] | None = None) -> list[str]:
    """Write the Chrome trace JSON of ``traces`` to ``out``; return the messages about dropped samples.

    ``max_events`` caps the samples in all; each trace gets an equal share of it.
    """
    events, notes, sources = [], [], []
    share = max(1, max_events // max(1, len(traces)))
    for pid, trace in enumerate(traces):
        label = labels[pid] if labels else trace.name
        trace_events_, capped = trace_events(trace, pid, share, label)
        events += trace_events_
        sources.append({"pid": pid, "file": str(trace.path), "kind": trace.kind, "nranks": trace.nranks,
                        "simulated": trace.simulated, "samples": capped.total,
                        "exported": len(capped.samples), "dropped": capped.message or ""})
        if capped.message:
            notes.append(f"{trace.path}: {capped.message}")
    document = {"traceEvents": events, "displayTimeUnit": "ns",
                "otherData": {"generator": "scaleprobe-analyze timeline", "clocks": CLOCK_NOTE,
                              "units": "ts and dur in microseconds; args wall_s and cpu_s in seconds",
                              "traces": sources}}
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w") as f:
        json.dump(document, f, separators=(",", ":"))
    return notes
