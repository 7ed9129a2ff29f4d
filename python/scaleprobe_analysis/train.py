"""Kind ``train`` (``gpt_train``, ``resnet_train`` on the data-parallel engine of ``trainers/dp``).

Definitions of every number (summarised steps, iteration time, breakdown, samples per step,
strong/weak scaling over points with passes combined): ``train_tables.py``; figures:
``train_figures.py``. This module is the kind's entry for the registry (``kinds.py``):

- one trace: figures ``breakdown``, ``bucket_caps``, ``overlap``, ``contention``; tables: cases,
  breakdown, best cap per algorithm, contention, the step-phase profile and every step. Older
  ``gpt_train`` traces without the engine's tables get the step tables only.
- a case is a row of ``cases`` (algorithm, bucket cap), named 'ring cap 25'; per-rank imbalance
  compares each rank's **compute** per step (``iterations.compute_s`` = forward + backward +
  optimizer, summarised steps), which has no waiting in it; ``compare`` matches cases by (model,
  ranks, global batch, algorithm, bucket cap) on the iteration time (slowest rank), with each
  summarised step's slowest-rank ``step_s`` as the samples.
- timeline: per rank the main thread's step phases and a track of its bucket allreduces with their
  ready instants and flow arrows: the communication thread's (older traces, thread mode), or in
  progress and none mode the allreduces the main thread advanced (progress mode: two tracks, up to
  two buckets are in flight at once); none for a run without buckets (``--no-comm``, local SGD).
- traces with the overlap modes (root attributes ``overlap_mode``, ``overlap_reason``, ``comm_cpu``,
  ``no_comm``; ``iterations.progress_s`` and the exposed wait split, since 2026-11-26) get the
  split breakdown (``train_tables.BREAKDOWN_SPLIT``), the split's case columns, the mode and its
  reason; everything else about older traces is as it was (their stored reports regenerate).
- across points: one section per scaling group (``train_tables.scaling_groups``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .campaign import BackendCases, Options, Point, Section, combine_points, data_note
from .textfmt import markdown_table, seconds_to_ms
from .trace import Trace
from .train_figures import (breakdown_figure, bucket_cap_figure, contention_figure, hidden_figure,
                            point_breakdown_figure, scaling_figure)
from .train_tables import (ScalingGroup, breakdown_components, breakdown_table, case_label, cases_table, group_slug,
                           has_engine_tables, has_split, no_comm, scaling_groups, step_contention, summarised)

SUMMARY_TABLE = "cases"  # the per-case table `export` writes
KIND = "train"
CASE_KEYS = ("model", "ranks", "global_batch", "algorithm", "bucket_cap")
CASE_AXIS = "case: algorithm and bucket cap (MiB)"
IMBALANCE_NOTE = ("compute = forward + backward + optimizer over the summarised steps; a slow rank here makes "
                  "every other rank wait in the gradient allreduce")
TIMELINE_NOTE = "train: main and communication thread per rank"  # older traces (timeline_note)


# --- one trace -------------------------------------------------------------------------------------

HIDDEN_DEFINITION = (
    "`comm_mean_s` = the buckets' allreduce time per step, each bucket from started to finished: in thread mode the "
    "communication thread's busy time = `peers_mean_s` (its handshake wait until every rank had the bucket ready; "
    "thread mode only, 0 otherwise) + `transfer_mean_s` (the allreduce calls); in progress mode each bucket starts as "
    "backward finishes it and is advanced from the main thread (`progress_mean_s` of it inside backward, the rest in "
    "the wait), up to 2 buckets in flight at once, so it is time in flight, not busy time; in none mode the allreduces "
    "one after another after backward. `exposed_comm_mean_s` = the wait after backward (+ local-SGD averaging) = "
    "`exposed_wait_peers_mean_s` (until every rank had finished backward: waiting for the slowest peer) + "
    "`exposed_after_ready_mean_s` (communication after all were ready); `reference_comm_s` = the same buckets "
    "allreduced **without** overlap in the same run, after a barrier (trace attribute `reference_iterations`); "
    "`hidden_fraction` = 1 − exposed / reference: the share of a no-overlap allreduce that overlapping hid, n/a with "
    "one rank (nothing to hide). Negative: overlapping cost more than it hid (the transfers slowed down competing "
    "with backward for the cores, or peers arrived late).")
# The definition in reports of traces without the overlap modes (all ran with a communication thread).
LEGACY_HIDDEN_DEFINITION = (
    "`comm_mean_s` = the communication thread's busy time per step = `peers_mean_s` (handshake wait until every "
    "rank had the bucket ready) + `transfer_mean_s` (the allreduce calls); `exposed_comm_mean_s` = the wait after "
    "backward (+ local-SGD averaging); `reference_comm_s` = the same buckets allreduced **without** overlap in the "
    "same run, after a barrier (trace attribute `reference_iterations`); `hidden_fraction` = 1 − exposed / "
    "reference: the share of a no-overlap allreduce that overlapping hid. Negative: overlapping cost more than it "
    "hid (the transfers slowed down competing with backward for the cores, or peers arrived late).")


def has_reference(trace: Trace) -> bool:
    """True when the engine measured each case's no-overlap allreduce in the run (hidden_fraction is defined)."""
    cases = trace.table("cases")
    return "hidden_fraction" in cases and cases["hidden_fraction"].notna().any()


def has_modes(trace: Trace) -> bool:
    """True for a trace written with the overlap modes (root attribute ``overlap_mode``)."""
    return "overlap_mode" in trace.attrs


def comm_columns(trace: Trace) -> list[str]:
    """The communication columns of the cases table this trace has (older traces lack the split).

    None for a ``--no-comm`` run; the hidden fraction (and a reference that was not measured) left
    out of a trace with the overlap modes where it is NaN throughout (one rank, local SGD).
    """
    if no_comm(trace):
        return []
    wanted = ("comm_mean_s", "peers_mean_s", "transfer_mean_s", "progress_mean_s", "exposed_comm_mean_s",
              "exposed_wait_peers_mean_s", "exposed_after_ready_mean_s", "reference_comm_s", "hidden_fraction")
    cases = trace.table("cases")
    present = [c for c in wanted if c in cases]
    if has_modes(trace):
        present = [c for c in present if c not in ("reference_comm_s", "hidden_fraction") or cases[c].notna().any()]
    return present


def communication_lines(trace: Trace) -> list[str]:
    """How this run communicated: the overlap mode and its reason (traces with the overlap modes only)."""
    a = trace.attrs
    if no_comm(trace):
        return ["Communication: **no communication (--no-comm)**: every rank trained alone, the same-load baseline a "
                "data-parallel run is measured against (no buckets, no exposed communication, no hidden fraction).", ""]
    if not has_modes(trace):
        return []
    cpu = int(a.get("comm_cpu", -1))
    where = f", communication thread on CPU {cpu}" if cpu >= 0 else ""
    local = f"; local SGD: parameters averaged every {a['local_sgd']} step(s)" if int(a.get("local_sgd", 0)) else ""
    return [f"Communication: overlap mode **{a['overlap_mode']}**{where} (`overlap_reason`: {a.get('overlap_reason', '?')})"
            f"{local}.", ""]


def _no_hidden_note(trace: Trace) -> str:
    """Why the cases table has no hidden fraction (empty when it has one)."""
    if has_reference(trace):
        return ""
    if not has_modes(trace):
        return " (This trace predates that measurement: no hidden fraction.)"
    if no_comm(trace):
        return "(No communication (--no-comm): no hidden fraction.)"
    if trace.nranks == 1:
        return " (One rank: nothing to hide, hidden fraction n/a.)"
    if int(trace.attrs.get("local_sgd", 0)):
        return " (Local SGD: no gradient allreduce, hidden fraction n/a.)"
    return " (No hidden fraction in this trace.)"


def _shard_note(trace: Trace) -> str:
    """What the communication columns mean in a sharded run (--shard; empty otherwise)."""
    level = str(trace.attrs.get("shard", "none"))
    if level == "none":
        return ""
    return (f" Sharded (`--shard {level}`): each bucket is a reduce-scatter, not an allreduce, and the exposed "
            "communication includes the parameters' all-gather after the optimizer (`all_gather` in the phase "
            f"summary); each rank holds at most {trace.attrs.get('shard_numel_max')} parameters' optimizer state.")


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


def figures(trace: Trace) -> dict[str, Figure]:
    """Every figure of one train trace written by the data-parallel engine (none for older traces)."""
    if not has_engine_tables(trace):
        return {}
    figs = {"breakdown": breakdown_figure(trace), "bucket_caps": bucket_cap_figure(trace)}
    if has_reference(trace):
        figs["hidden"] = hidden_figure(trace)
    figs["contention"] = contention_figure(trace)
    return figs


def _engine_tables(trace: Trace) -> list[str]:
    """Cases, breakdown, bucket caps, overlap and contention of a train trace from the data-parallel engine."""
    cases = cases_table(trace)
    rate = [c for c in cases.columns if c.endswith("_per_s") and c != "samples_per_s"]
    view = cases[["label", "buckets", "steps", "iteration_mean_s", "iteration_median_s", "iteration_min_s",
                  "compute_mean_s", *comm_columns(trace), "compute_imbalance", "slowest_rank", "samples_per_s",
                  *rate, "best"]]
    view = seconds_to_ms(view, [c for c in view.columns if c.endswith("_s") and not c.endswith("_per_s")])
    view = view.assign(best=view["best"].map({True: "★", False: ""}))
    bd = breakdown_table(trace)
    columns = [col for _, col in breakdown_components([trace])]
    bd_view = seconds_to_ms(bd[["label", "steps", *columns, "iteration_s", "sum_s"]], [*columns, "iteration_s", "sum_s"])
    bd_view = bd_view.rename(columns={"exposed_ms": "exposed_ms (wait+average)",
                                      "after_ready_ms": "after_ready_ms (wait+average−wait_peers)"})
    if has_split(trace):
        bd_text = ("Mean over summarised steps of the **slowest rank's** phases in each step, so the components add up "
                   "to the time per iteration (`sum_ms` vs `iteration_ms`): `progress_ms` = communication inside "
                   "backward (progress mode's calls that advanced the buckets, taken out of `backward_ms`; 0 in the "
                   "other modes), `exposed_wait_peers_ms` = waiting for the slowest peer's backward, `after_ready_ms` = "
                   "exposed communication after all were ready (the timed wait + average less the wait for peers).")
    else:
        bd_text = ("Mean over summarised steps of the **slowest rank's** phases in each step, so the components add "
                   "up to the time per iteration (`sum_ms` vs `iteration_ms`).")
    best = cases.loc[cases.groupby("algorithm", sort=False)["iteration_mean_s"].idxmin()] \
        if cases["iteration_mean_s"].notna().any() else cases.iloc[0:0]
    hidden = ["reference_comm_s", "hidden_fraction"] if has_reference(trace) else []
    best_view = seconds_to_ms(best[["algorithm", "bucket_cap", "buckets", "iteration_mean_s", "exposed_comm_mean_s",
                                    *hidden]], ["iteration_mean_s", "exposed_comm_mean_s", *hidden[:1]])
    excluded = trace.attrs.get("summary_excludes", "first step excluded")
    mode = trace.attrs.get("overlap_mode", "thread")
    if no_comm(trace):
        cpu_text = "no communication: `comm_cpu_wall` n/a."
    elif mode == "progress":
        cpu_text = ("no communication thread: `comm_cpu_wall` = the time in the main thread's calls that advanced the "
                    "buckets ÷ the buckets' time in flight.")
    elif mode == "none":
        cpu_text = "no communication thread (overlap none: the allreduces run on the main thread): `comm_cpu_wall` n/a."
    else:
        cpu_text = ("the communication thread's CPU counts in the process CPU, so values above 1 are possible. "
                    "`comm_cpu_wall` = that thread's CPU / allreduce wall time.")
    definition = ("" if no_comm(trace) else HIDDEN_DEFINITION) if has_modes(trace) else LEGACY_HIDDEN_DEFINITION
    return [*communication_lines(trace), f"#### Cases (algorithm × bucket cap): {trace.attrs.get('scaling', '?')} scaling, global batch "
            f"{trace.attrs.get('global_batch', '?')}, {trace.attrs.get('num_cases', len(cases))} case(s) cycled step by step",
            "", f"Iteration time = the slowest rank's step time, over the summarised steps ({excluded}); compute, "
            "communication and exposed communication are means over steps and ranks. " + definition
            + _no_hidden_note(trace) + _shard_note(trace) + " ★ = fastest case.", "", markdown_table(view), "",
            "#### Per-iteration latency breakdown (figure: breakdown)", "", bd_text, "", markdown_table(bd_view), "",
            "#### Bucket cap sweep (figures: bucket_caps, hidden)", "",
            "Best cap per algorithm (lowest time per iteration):", "", markdown_table(best_view), "",
            "#### Contention indicator (figure: contention): process CPU / (wall × compute threads)", "",
            "Per rank and case over the summarised steps. Below 1 the rank's threads waited (blocked, or runnable "
            "on a busy core); " + cpu_text, "",
            markdown_table(step_contention(trace)), ""]


def report_tables(trace: Trace) -> list[str]:
    """A trainer run: the engine's tables (if any), where a step's time goes, and every step."""
    lines = _engine_tables(trace) if has_engine_tables(trace) else []
    lines += ["#### Step-phase profile", "",
              f"Mean, median and fastest wall time per step and each phase's share; "
              f"{trace.attrs.get('summary_excludes', 'the first step')} is excluded.", "",
              markdown_table(trace.table("summary")), ""]
    if "steps" in trace.tables:
        steps = trace.table("steps")
        cols = [c for c in ("step", "loss", "val_loss", "lr", "grad_norm", "step_wall_s", "step_process_cpu_s",
                            "tokens_per_s") if c in steps.columns]
        lines += ["#### Steps", "", markdown_table(steps[cols]), ""]
    return lines


def case_labels(trace: Trace) -> pd.Series:
    cases = trace.table("cases")
    return pd.Series([case_label(a, c) for a, c in zip(cases["algorithm"], cases["bucket_cap"])], index=cases["case"])


def rank_times(trace: Trace) -> pd.DataFrame | None:
    """Per rank and summarised step the compute time (µs); None without the engine's tables or with one rank."""
    if not has_engine_tables(trace) or trace.nranks < 2:
        return None
    it = summarised(trace)
    if it.empty:
        return None
    return pd.DataFrame({"rank": it["rank"], "case": it["case"], "iteration": it["step"],
                         "wall_us": it["compute_s"] * 1e6, "cpu_us": float("nan")}).reset_index(drop=True)


def iteration_times(trace: Trace) -> pd.DataFrame:
    """Per (case, summarised step) the slowest rank's ``step_s`` in µs: columns case, iteration, wall_us."""
    slowest = summarised(trace).groupby(["case", "step"], as_index=False)["step_s"].max()
    return pd.DataFrame({"case": slowest["case"], "iteration": slowest["step"], "wall_us": slowest["step_s"] * 1e6})


def case_table(trace: Trace) -> pd.DataFrame:
    """``cases`` with the compare keys; ``t_mean_us``/``p50_us`` = iteration mean/median (slowest rank)."""
    if "cases" not in trace.tables:
        raise ValueError(f"{trace.path}: a trainer trace without the engine's cases table (older gpt_train) "
                         "cannot be compared")
    cases = trace.table("cases").copy()
    cases["model"] = str(trace.attrs.get("model_name", trace.attrs.get("trainer", "")))
    cases["ranks"] = int(trace.nranks)
    cases["global_batch"] = int(trace.attrs.get("global_batch", 0))
    cases["t_mean_us"] = cases["iteration_mean_s"] * 1e6
    cases["p50_us"] = cases["iteration_median_s"] * 1e6
    return cases


def case_args(trace: Trace) -> dict[int, dict]:
    if "cases" not in trace.tables:  # an older trace: one case, summary per phase
        return {}
    return {int(r["case"]): {"algorithm": r["algorithm"], "cap": r["bucket_cap"], "buckets": int(r["buckets"])}
            for r in trace.table("cases").to_dict("records")}


def _bucket_lanes(trace: Trace, buckets: pd.DataFrame) -> tuple[np.ndarray, int]:
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
    lane_of, lanes = _bucket_lanes(trace, buckets)
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
                "queued_us": float((b.start_s - b.ready_s) * 1e6), "wall_s": float(b.end_s - b.start_s),
                "cpu_s": float(b.cpu_s)}
        main, comm, flow = per * int(b.rank), per * int(b.rank) + 1 + int(lane), pid * 100_000_000 + k
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


# --- across points -------------------------------------------------------------------------------

def campaign_sections(points: list[Point], options: Options) -> list[Section]:
    """One section per scaling group: figures (scaling, breakdown per point) and tables."""
    traces = [t for p in points for t in p.traces]
    groups = scaling_groups(traces, options.case)
    if not groups and options.case != "best" and scaling_groups(traces):
        return [Section("trainer scaling", "scaling", [
            f"No scaling series: case `{options.case}` is not in two or more rank counts of any configuration "
            "(use `--case best` or one of the cases listed in the trace sections).", ""], {}, [])]
    return [group_section(g, options.case) for g in groups]


def group_section(group: ScalingGroup, case: str) -> Section:
    """The cross-point section of one scaling group (definitions: train_tables.py)."""
    which = "each trace's fastest case (algorithm, bucket cap)" if case == "best" else f"case `{case}`"
    tab = group.table
    rate = f"{group.unit}_per_s"
    view = seconds_to_ms(tab[["point", "ranks", "passes", "case", "iteration_s", "iteration_s_min", "iteration_s_max",
                              "spread", "speedup", "ideal_speedup", "efficiency", rate]],
                         ["iteration_s", "iteration_s_min", "iteration_s_max"])
    intro = [f"Traces grouped by trainer, model, scaling mode, batch (strong: global batch; weak: batch per rank), "
             f"sequence length, overlap and local SGD; one row per point (nodes × tasks per node × cpus per task). "
             f"Time per iteration t = the slowest rank's step time, mean over summarised steps, of {which}; the "
             "passes of a point are combined as the median (min–max shown; spread = (max − min) / median). p0 = the "
             "first point. Strong scaling: speedup = t(p0)/t(p), efficiency = speedup·p0/p (= t1/(p·tp) from 1 rank). "
             "Weak scaling: efficiency = t(p0)/t(p), speedup = efficiency·p/p0 (the throughput ratio). Definitions: "
             "train_tables.py.", "",
             *data_note(group.traces)]
    traces = ", ".join(str(t.path.name) for t in group.traces)
    columns = [col for _, col in group.components]
    tables = [f"{group.scaling.capitalize()} scaling (traces: {traces}):", "", markdown_table(view), "",
              "Breakdown per point (ms; slowest rank's phases of the chosen case, median over passes):", "",
              markdown_table(seconds_to_ms(tab[["point", "ranks", "case", *columns, "iteration_s"]],
                                           [*columns, "iteration_s"])), ""]
    figs = {"scaling": scaling_figure(group), "breakdown": point_breakdown_figure(group)}
    return Section(f"trainer scaling: {group.label}", group_slug(group), intro, figs, tables)


def backend_cases(points: list[Point]) -> BackendCases:
    """Every case (algorithm, bucket cap), passes combined: the slowest rank's step time and its exposed
    communication, mean over summarised steps (train_tables.breakdown_table)."""
    def per_pass(trace: Trace) -> pd.DataFrame:
        if not has_engine_tables(trace):
            return pd.DataFrame(columns=["case", "step_ms", "exposed_ms"])
        b = breakdown_table(trace)
        return pd.DataFrame({"case": b["label"], "step_ms": b["iteration_s"] * 1e3, "exposed_ms": b["exposed_s"] * 1e3})
    return BackendCases(combine_points(points, per_pass, ["case"], ["step_ms", "exposed_ms"]), ["case"],
                        {"step_ms": "step time, slowest rank (ms)", "exposed_ms": "exposed communication (ms)"})
