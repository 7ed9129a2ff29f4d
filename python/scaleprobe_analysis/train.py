"""Kind ``train`` (``gpt_train``, ``resnet_train`` on the data-parallel engine of ``trainers/dp``).

Definitions of every number (summarised steps, iteration time, breakdown, samples per step,
strong/weak scaling over points with passes combined): ``train_tables.py``; figures:
``train_figures.py``; one trace's report tables: ``train_report.py``; its timeline:
``train_timeline.py``. This module is the kind's entry for the registry (``kinds.py``), the
interface of those two re-exported here:

- one trace: figures ``breakdown``, ``bucket_caps``, ``overlap``, ``contention`` (and ``pipeline``
  for a pipelined run: ``train_pipeline.py``); tables: cases, breakdown, best cap per algorithm,
  contention, the pipeline's stages, the step-phase profile and every step. Older
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

import pandas as pd
from matplotlib.figure import Figure

from . import train_parallelism, train_pipeline, train_report, train_timeline
from .campaign import BackendCases, Options, Point, Section, combine_points, data_note
from .textfmt import markdown_table, seconds_to_ms
from .trace import Trace
from .train_figures import (breakdown_figure, bucket_cap_figure, contention_figure, hidden_figure,
                            point_breakdown_figure, scaling_figure)
from .train_report import has_reference
from .train_tables import (ScalingGroup, breakdown_table, case_label, group_slug, has_engine_tables, scaling_groups,
                           summarised)

SUMMARY_TABLE = "cases"  # the per-case table `export` writes
KIND = "train"
CASE_KEYS = ("model", "ranks", "global_batch", "algorithm", "bucket_cap")
CASE_AXIS = "case: algorithm and bucket cap (MiB)"
IMBALANCE_NOTE = ("compute = forward + backward + optimizer over the summarised steps; a slow rank here makes "
                  "every other rank wait in the gradient allreduce")
TIMELINE_NOTE = train_timeline.TIMELINE_NOTE


# --- one trace -------------------------------------------------------------------------------------

report_tables = train_report.report_tables
timeline_note = train_timeline.timeline_note
case_args = train_timeline.case_args
timeline_events = train_timeline.timeline_events


def figures(trace: Trace) -> dict[str, Figure]:
    """Every figure of one train trace written by the data-parallel engine (none for older traces)."""
    if not has_engine_tables(trace):
        return {}
    figs = {"breakdown": breakdown_figure(trace), "bucket_caps": bucket_cap_figure(trace)}
    if has_reference(trace):
        figs["hidden"] = hidden_figure(trace)
    figs["contention"] = contention_figure(trace)
    if train_pipeline.has_pipeline(trace):
        figs["pipeline"] = train_pipeline.pipeline_figure(trace)
    return figs


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


# --- across points -------------------------------------------------------------------------------

def campaign_sections(points: list[Point], options: Options) -> list[Section]:
    """One section per scaling group (figures: scaling, breakdown per point; tables), then one per group of
    points that split the same configuration differently (data parallel, pipeline, hybrid:
    train_parallelism.py)."""
    traces = [t for p in points for t in p.traces]
    groups = scaling_groups(traces, options.case)
    splits = train_parallelism.sections(points)
    if not groups and options.case != "best" and scaling_groups(traces):
        return [Section("trainer scaling", "scaling", [
            f"No scaling series: case `{options.case}` is not in two or more rank counts of any configuration "
            "(use `--case best` or one of the cases listed in the trace sections).", ""], {}, []), *splits]
    return [group_section(g, options.case) for g in groups] + splits


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
