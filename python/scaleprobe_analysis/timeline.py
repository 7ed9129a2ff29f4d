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

A kind's module can lay its events out its own way (``timeline_events``, see ``kinds.py``):
**trainer traces** (kind ``train`` from the data-parallel engine) get *two* threads per rank:
``tid 2r`` is rank r's main thread with its step phases (data, forward, backward, progress,
wait, optimizer, average, validation; every sample except the ``allreduce`` rows) and ``tid 2r+1``
its communication thread with one complete event ``bucket N`` per row of the ``buckets``
table (start → end; args step, case, algorithm, cap, offset, numel, tensors, ready_s,
queued_us = start − ready, never negative, cpu_s). Each bucket's moment of readiness (backward
finished its last gradient) is an instant event ``bucket N ready`` on the communication thread
plus a flow arrow from the main thread (inside ``backward``) to the allreduce, so Perfetto shows
how the allreduces overlap backward; a streamed bucket (``shm-seg``'s, which starts before it is
ready) has arg ``streamed`` and its ready instant inside its span, without an arrow. Both
threads of a rank share the rank's clock and origin. The
``--max-events`` cap counts samples (each bucket's allreduce is one) and keeps whole steps;
the ready instant and the two flow events of a bucket come on top.

Traces with the overlap modes (root attribute ``overlap_mode``) label the bucket track by where
the allreduces ran: ``thread`` as above; ``progress``: no communication thread, the buckets are
advanced from the main thread (inside backward, phase ``progress``, and in ``wait``), the track
shows each bucket from started to finished, and as up to two are in flight at once a rank gets
two bucket tracks (tids (1 + L)·r for the main thread and the L bucket tracks after it); ``none``:
the allreduces run on the main thread in ``wait``. The ``progress`` phase is one sample per step
(the sum of the calls spread through backward) and is drawn right after backward's own time. A
run without buckets (``--no-comm``, local SGD) has the main thread's track only.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .kinds import module_for
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
    module = module_for(trace.kind)
    own = module.timeline_events(trace, pid, s) if module is not None else None
    if own is not None:
        return events + own, capped
    for rank in range(trace.nranks):
        events += [{"ph": "M", "pid": pid, "tid": rank, "name": "thread_name",
                    "args": {"name": f"rank {rank} (own clock, first sample at 0)"}},
                   {"ph": "M", "pid": pid, "tid": rank, "name": "thread_sort_index", "args": {"sort_index": rank}}]
    if s.empty:
        return events, capped
    origin = s.groupby("rank")["start_s"].transform("min")
    ts = ((s["start_s"] - origin) * 1e6).to_numpy()
    dur = (s["wall_s"] * 1e6).to_numpy()
    case_args = module.case_args(trace) if module is not None else {}
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
