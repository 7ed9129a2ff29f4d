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
- timeline: two tracks per rank, the main thread's step phases and the communication thread's
  bucket allreduces with their ready instants and flow arrows.
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
from .train_tables import (BREAKDOWN_COLUMNS, ScalingGroup, breakdown_table, case_label, cases_table, group_slug,
                           has_engine_tables, scaling_groups, step_contention, summarised)

SUMMARY_TABLE = "cases"  # the per-case table `export` writes
KIND = "train"
CASE_KEYS = ("model", "ranks", "global_batch", "algorithm", "bucket_cap")
CASE_AXIS = "case: algorithm and bucket cap (MiB)"
IMBALANCE_NOTE = ("compute = forward + backward + optimizer over the summarised steps; a slow rank here makes "
                  "every other rank wait in the gradient allreduce")
TIMELINE_NOTE = "train: main and communication thread per rank"


# --- one trace -------------------------------------------------------------------------------------

HIDDEN_DEFINITION = (
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


def comm_columns(trace: Trace) -> list[str]:
    """The communication columns of the cases table this trace has (older traces lack the split)."""
    wanted = ("comm_mean_s", "peers_mean_s", "transfer_mean_s", "exposed_comm_mean_s", "reference_comm_s",
              "hidden_fraction")
    return [c for c in wanted if c in trace.table("cases")]

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
    bd_view = seconds_to_ms(bd[["label", "steps", *BREAKDOWN_COLUMNS, "iteration_s", "sum_s"]],
                            [*BREAKDOWN_COLUMNS, "iteration_s", "sum_s"])
    bd_view = bd_view.rename(columns={"exposed_ms": "exposed_ms (wait+average)"})
    best = cases.loc[cases.groupby("algorithm", sort=False)["iteration_mean_s"].idxmin()] \
        if cases["iteration_mean_s"].notna().any() else cases.iloc[0:0]
    hidden = ["reference_comm_s", "hidden_fraction"] if has_reference(trace) else []
    best_view = seconds_to_ms(best[["algorithm", "bucket_cap", "buckets", "iteration_mean_s", "exposed_comm_mean_s",
                                    *hidden]], ["iteration_mean_s", "exposed_comm_mean_s", *hidden[:1]])
    excluded = trace.attrs.get("summary_excludes", "first step excluded")
    return [f"#### Cases (algorithm × bucket cap): {trace.attrs.get('scaling', '?')} scaling, global batch "
            f"{trace.attrs.get('global_batch', '?')}, {trace.attrs.get('num_cases', len(cases))} case(s) cycled step by step",
            "", f"Iteration time = the slowest rank's step time, over the summarised steps ({excluded}); compute, "
            "communication and exposed communication are means over steps and ranks. " + HIDDEN_DEFINITION
            + (" (This trace predates that measurement: no hidden fraction.)" if not has_reference(trace) else "")
            + " ★ = fastest case.", "", markdown_table(view), "",
            "#### Per-iteration latency breakdown (figure: breakdown)", "",
            "Mean over summarised steps of the **slowest rank's** phases in each step, so the components add "
            "up to the time per iteration (`sum_ms` vs `iteration_ms`).", "", markdown_table(bd_view), "",
            "#### Bucket cap sweep (figures: bucket_caps, hidden)", "",
            "Best cap per algorithm (lowest time per iteration):", "", markdown_table(best_view), "",
            "#### Contention indicator (figure: contention): process CPU / (wall × compute threads)", "",
            "Per rank and case over the summarised steps. Below 1 the rank's threads waited (blocked, or runnable "
            "on a busy core); the communication thread's CPU counts in the process CPU, so values above 1 are "
            "possible. `comm_cpu_wall` = that thread's CPU / allreduce wall time.", "",
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


def timeline_events(trace: Trace, pid: int, samples: pd.DataFrame) -> list[dict] | None:
    """Two tracks per rank: phases on tid 2r, bucket allreduces (+ ready instants and flows) on tid 2r+1.

    ``samples``: the rows of the ``samples`` table to export (whole steps). None for a trace
    without the engine's ``iterations`` table (the standard one-track-per-rank layout then).
    """
    if "iterations" not in trace.tables:
        return None
    phases = list(trace.table("phases")["name"])
    s = samples
    allreduce = phases.index("allreduce") if "allreduce" in phases else -1
    buckets = trace.tables.get("buckets", pd.DataFrame(columns=["rank", "step", "start_s", "ready_s"]))
    buckets = buckets[buckets["step"].isin(set(s["iteration"]))] if len(buckets) else buckets
    s = s[s["phase"] != allreduce]
    origin = pd.concat([s.groupby("rank")["start_s"].min(), buckets.groupby("rank")["ready_s"].min(),
                        buckets.groupby("rank")["start_s"].min()], axis=1).min(axis=1).to_dict()
    args_of = case_args(trace)
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
                **args_of.get(int(r.case), {})}
        if "process_cpu_s" in s.columns and np.isfinite(r.process_cpu_s):
            args["process_cpu_s"] = float(r.process_cpu_s)
        timed.append((2 * r.rank, ts, -dur, {"ph": "X", "pid": pid, "tid": 2 * int(r.rank), "cat": phase, "name": phase,
                                             "ts": round(float(ts), 4), "dur": round(float(dur), 4), "args": args}))
    for k, b in enumerate(buckets.itertuples(index=False)):
        o = origin[b.rank]
        ts, dur, ready = (b.start_s - o) * 1e6, (b.end_s - b.start_s) * 1e6, (b.ready_s - o) * 1e6
        name = f"bucket {int(b.bucket)}"
        args = {"case": int(b.case), "step": int(b.step), "bucket": int(b.bucket), **args_of.get(int(b.case), {}),
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
    tables = [f"{group.scaling.capitalize()} scaling (traces: {traces}):", "", markdown_table(view), "",
              "Breakdown per point (ms; slowest rank's phases of the chosen case, median over passes):", "",
              markdown_table(seconds_to_ms(tab[["point", "ranks", "case", *BREAKDOWN_COLUMNS, "iteration_s"]],
                                           [*BREAKDOWN_COLUMNS, "iteration_s"])), ""]
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
