"""Trainer traces (kind ``train``): the definitions, per-case tables and strong/weak scaling arithmetic.

``train.py`` is the kind's module (figures in ``train_figures.py``); the numbers come from here.

A trainer (``gpt_train``, the ResNet trainer, ...) runs on the data-parallel engine
(``trainers/dp/engine.cpp``), which writes per rank and step the table ``iterations`` (phase
wall times, communication, overlap, ``in_summary``), per rank, step and bucket the table
``buckets`` (ready/start/end on the rank's own clock) and the shared table ``cases``, one row
per (algorithm, bucket cap) case; several cases are cycled step by step.

Definitions used everywhere here (and in the figures and report):

- **summarised steps**: rows of ``iterations`` with ``in_summary == 1`` (the engine leaves out
  the first round of cases and verified steps).
- **iteration time** of a step: the *slowest rank's* ``step_s`` (the step is done when the last
  rank is); a case's time per iteration is the mean of that over its summarised steps. This
  reproduces ``cases.iteration_mean_s``.
- **breakdown** of a step: the slowest rank's own phases of that step: data, forward,
  backward, exposed communication (``wait_s + average_s``, column ``exposed_s`` here; the
  engine's ``exposed_comm_s`` is the reducer's own measure of the wait and can differ from the
  timed phase by a few µs), optimizer. They add up to the slowest rank's ``step_s`` (the
  engine's sum of the phases), so the means over steps add up to the case's time per iteration.
  Traces with the overlap modes (``iterations.progress_s`` and ``exposed_wait_peers_s``, since
  2026-11-26; :func:`has_split`) break it down further (``BREAKDOWN_SPLIT``): data, forward,
  backward (its own compute), communication inside backward (``progress_s``: progress mode's
  calls that advanced the buckets, taken out of backward), waiting for the slowest peer's
  backward (``exposed_wait_peers_s``), exposed communication after all were ready (column
  ``after_ready_s`` = ``wait_s + average_s − exposed_wait_peers_s``: the timed phases less the
  wait for peers, so the components still add up to ``step_s`` exactly; the engine's
  ``exposed_after_ready_s`` is the same on the reducer's clock, a few µs less), optimizer.
- **samples per step**: ``tokens_per_step`` (GPT), ``images_per_step`` (ResNet), or else
  ``global_batch`` rows; throughput = samples per step / time per iteration.
- **scaling** (traces of one configuration, :func:`scaling_key`, at several points nodes × tasks
  per node × cpus per task, ``campaign.point_of``): per trace the chosen case's time per
  iteration (``--case``: ``best`` = the trace's fastest case, or ``ALG/CAP``); the traces of one
  point are its passes, combined as the **median** over passes with **min–max** (a breakdown
  component likewise: its median over passes, so the medians need not add up exactly). With p0
  the rank count of the first point (fewest ranks, then fewest nodes) and t its median time:
  strong scaling: speedup = t(p0) / t(p), efficiency = speedup / (p / p0), i.e. t1 / (p · tp)
  when p0 = 1; weak scaling: efficiency = t(p0) / t(p) (t1 / tp) and speedup = (p / p0) ·
  efficiency (the throughput ratio). Ideal: speedup p / p0, efficiency 1. The min–max of speedup
  and efficiency come from the min–max of t(p) with t(p0) fixed at its median.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from .campaign import point_of
from .textfmt import file_stem
from .trace import Trace

# (label, iterations column): the stacked components of a step, in execution order.
BREAKDOWN = (("data", "data_s"), ("forward", "forward_s"), ("backward", "backward_s"),
             ("exposed communication (wait + average)", "exposed_s"), ("optimizer", "optimizer_s"))
BREAKDOWN_COLUMNS = tuple(col for _, col in BREAKDOWN)
PROGRESS = ("communication inside backward (progress)", "progress_s")
# Traces with the overlap modes: the exposed part split at the moment every rank had finished backward.
BREAKDOWN_SPLIT = (("data", "data_s"), ("forward", "forward_s"), ("backward", "backward_s"), PROGRESS,
                   ("waiting for the slowest peer's backward", "exposed_wait_peers_s"),
                   ("exposed communication after all were ready", "after_ready_s"), ("optimizer", "optimizer_s"))
# A scaling group mixing both: the old components plus progress (0 in the older traces).
BREAKDOWN_MIXED = (*BREAKDOWN[:3], PROGRESS, *BREAKDOWN[3:])
SPLIT_COLUMNS = ("progress_s", "exposed_wait_peers_s")  # the iterations columns BREAKDOWN_SPLIT needs
SAMPLE_UNITS = (("tokens_per_step", "tokens"), ("images_per_step", "images"), ("samples_per_step", "samples"))


def has_engine_tables(trace: Trace) -> bool:
    """True for a train trace written by the data-parallel engine (``iterations`` and ``cases``)."""
    return trace.kind == "train" and "iterations" in trace.tables and "cases" in trace.tables


def samples_per_step(trace: Trace) -> tuple[float, str]:
    """(samples per optimizer step over all ranks, unit): tokens, images, or global-batch rows."""
    for key, unit in SAMPLE_UNITS:
        if key in trace.attrs:
            return float(trace.attrs[key]), unit
    return float(trace.attrs.get("global_batch", math.nan)), "samples"


def case_label(algorithm: str, cap: str) -> str:
    """'ring cap 0.01', 'mpi cap tensor': how cases are named in figures, tables and --case."""
    return f"{algorithm} cap {cap}"


def cases_table(trace: Trace) -> pd.DataFrame:
    """The ``cases`` table sorted by cap, with ``label``, throughput and the best case flagged."""
    cases = trace.table("cases").copy()
    per_step, unit = samples_per_step(trace)
    cases.insert(1, "label", [case_label(a, c) for a, c in zip(cases["algorithm"], cases["bucket_cap"])])
    cases[f"{unit}_per_s"] = per_step / cases["iteration_mean_s"]
    best = cases["iteration_mean_s"].idxmin() if cases["iteration_mean_s"].notna().any() else None
    cases["best"] = [i == best for i in cases.index]
    return cases.sort_values(["cap_bytes", "algorithm"], kind="stable").reset_index(drop=True)


def has_split(trace: Trace) -> bool:
    """True for a trace with the overlap modes' columns (``progress_s``, the exposed wait split)."""
    return all(c in trace.table("iterations") for c in SPLIT_COLUMNS)


def no_comm(trace: Trace) -> bool:
    """True for a ``--no-comm`` run: every rank trained alone, no gradient communication."""
    return int(trace.attrs.get("no_comm", 0)) != 0


def breakdown_components(traces: list[Trace]) -> tuple:
    """The (label, column) components of the breakdown of ``traces`` (one trace, or a scaling group).

    ``BREAKDOWN`` for older traces, ``BREAKDOWN_SPLIT`` when every trace has the split, else
    ``BREAKDOWN_MIXED``.
    """
    split = [has_split(t) for t in traces]
    if not any(split):
        return BREAKDOWN
    return BREAKDOWN_SPLIT if all(split) else BREAKDOWN_MIXED


def summarised(trace: Trace) -> pd.DataFrame:
    """Rows of ``iterations`` that count in the summaries (``in_summary == 1``)."""
    it = trace.table("iterations")
    it = it[it["in_summary"] == 1]
    # --shard: the parameters' all-gather after the optimizer is exposed communication too.
    gather = it["all_gather_s"] if "all_gather_s" in it.columns else 0.0
    it = it.assign(exposed_s=it["wait_s"] + it["average_s"] + gather)
    if has_split(trace):
        it = it.assign(after_ready_s=it["exposed_s"] - it["exposed_wait_peers_s"])
    return it


def slowest_rank_steps(iterations: pd.DataFrame) -> pd.DataFrame:
    """Per (case, step): the slowest rank's row (``iteration_s`` = its ``step_s``, ``rank`` = which)."""
    if iterations.empty:
        return iterations.assign(iteration_s=[]).iloc[0:0]
    rows = iterations.loc[iterations.groupby(["case", "step"])["step_s"].idxmax()]
    return rows.assign(iteration_s=rows["step_s"]).reset_index(drop=True)


def breakdown_table(trace: Trace) -> pd.DataFrame:
    """Per case: mean over summarised steps of the slowest rank's phases (they sum to ``iteration_s``).

    The components are ``breakdown_components([trace])``; ``exposed_s`` (wait + average, and the
    parameters' all-gather under ``--shard``) is always there, and with the split also ``progress_s``,
    ``exposed_wait_peers_s`` and ``after_ready_s``.
    """
    slow = slowest_rank_steps(summarised(trace))
    cases = cases_table(trace)
    columns = [col for _, col in breakdown_components([trace])]
    extra = ["exposed_s"] if "exposed_s" not in columns else []
    means = slow.groupby("case")[[*columns, *extra, "wait_s", "average_s", "iteration_s"]].mean()
    steps = slow.groupby("case").size().rename("steps")
    out = cases[["case", "label", "algorithm", "bucket_cap", "cap_bytes"]].join(steps, on="case").join(means, on="case")
    out["steps"] = out["steps"].fillna(0).astype(int)
    out["sum_s"] = out[columns].sum(axis=1, min_count=1)
    return out


def step_contention(trace: Trace) -> pd.DataFrame:
    """Per case and rank over summarised steps: process CPU / (wall × threads) and the comm thread's CPU/wall.

    ``threads`` = the rank's compute threads (``ranks.omp_threads``, else the root attribute
    ``omp_threads``, else 1). The communication thread's CPU counts in the process CPU too, so the
    indicator can exceed 1 while it spins; clearly below 1 the rank's threads waited for a core
    (or blocked). In progress mode there is no such thread and ``comm_cpu_wall`` is the time in the
    calls that advanced the buckets ÷ their time in flight; in none mode it is NaN.
    """
    it = summarised(trace)
    threads = pd.Series(dtype=float)
    if "ranks" in trace.tables and "omp_threads" in trace.tables["ranks"]:
        threads = trace.tables["ranks"].set_index("rank")["omp_threads"].astype(float)
    default = float(trace.attrs.get("omp_threads", 1) or 1)
    g = it.groupby(["case", "rank"])
    out = g[["step_s", "process_cpu_s", "step_cpu_s", "comm_s", "comm_cpu_s"]].sum().reset_index()
    out["threads"] = out["rank"].map(threads).fillna(default).clip(lower=1)
    out["cpu_wall"] = out["process_cpu_s"] / (out["step_s"] * out["threads"])
    out["main_cpu_wall"] = out["step_cpu_s"] / out["step_s"]
    out["comm_cpu_wall"] = (out["comm_cpu_s"] / out["comm_s"]).where(out["comm_s"] > 0)
    if trace.attrs.get("overlap_mode") == "none":  # no communication thread and no CPU time of the buckets
        out["comm_cpu_wall"] = float("nan")
    labels = cases_table(trace).set_index("case")["label"]
    out.insert(1, "label", out["case"].map(labels))
    return out[["case", "label", "rank", "threads", "cpu_wall", "main_cpu_wall", "comm_cpu_wall"]]


def select_case(trace: Trace, choice: str = "best") -> pd.Series | None:
    """The ``cases_table`` row for ``choice``: 'best' (lowest time per iteration), 'ALG/CAP' or a label.

    None when the trace has no such case (or, for 'best', no summarised step).
    """
    cases = cases_table(trace)
    if choice == "best":
        valid = cases[cases["iteration_mean_s"].notna()]
        return None if valid.empty else valid.loc[valid["iteration_mean_s"].idxmin()]
    if "/" in choice:
        algorithm, cap = choice.split("/", 1)
        hit = cases[(cases["algorithm"] == algorithm) & (cases["bucket_cap"] == cap)]
    else:
        hit = cases[cases["label"] == choice]
    return None if hit.empty else hit.iloc[0]


# --- scaling ---------------------------------------------------------------------------------

POINT_COLUMNS = ("ranks", "nodes", "tasks_per_node", "cpus_per_task")


@dataclass(frozen=True)
class ScalingGroup:
    """Traces of one configuration at several points, reduced to one row per point (passes combined)."""

    key: tuple
    scaling: str  # "strong" or "weak"
    label: str
    unit: str  # tokens, images or samples
    traces: list  # the Trace objects, sorted by ranks
    table: pd.DataFrame  # scaling_table() plus the breakdown of the chosen case
    components: tuple = BREAKDOWN  # breakdown_components(traces): the breakdown columns in table


def scaling_key(trace: Trace) -> tuple | None:
    """What must match for traces to be one scaling series; None if the trace cannot be grouped.

    trainer, model, scaling, batch (strong: ``global_batch``; weak: rows per rank per step,
    ``global_batch / nranks``), sequence length where there is one, overlap (the integer attribute:
    0 for none; the modes progress and thread are one series, as ``--overlap auto`` picks progress
    for one rank and thread where a rank has a spare core), local SGD, the communication backend
    (attribute ``backend``; absent: mpi), the pipeline (stages, schedule, micro-batches: a series of
    one pipeline shape grows its data-parallel replicas; absent: None) and, last, ``no_comm``
    (``--no-comm`` runs are their own series; absent: 0).
    """
    a = trace.attrs
    scaling = a.get("scaling")
    if not has_engine_tables(trace) or scaling not in ("strong", "weak") or "global_batch" not in a:
        return None
    batch = int(a["global_batch"]) if scaling == "strong" else int(a["global_batch"]) // max(1, trace.nranks)
    return (a.get("trainer", a.get("program", "?")), a.get("model_name", a.get("model", "?")), scaling, batch,
            a.get("seq_len"), int(a.get("overlap", 1)), int(a.get("local_sgd", 0)), str(a.get("backend", "mpi")),
            pipeline_shape(trace), int(a.get("no_comm", 0)))


def pipeline_shape(trace: Trace) -> tuple[int, str, int] | None:
    """(stages, schedule, micro-batches) of a pipelined trace; None without a pipeline."""
    stages = int(trace.attrs.get("pipeline_stages", 1) or 1)
    if stages <= 1:
        return None
    return stages, str(trace.attrs.get("pipeline_schedule", "")), int(trace.attrs.get("pipeline_micro_batches", 0))


def _group_label(key: tuple) -> str:
    trainer, model, scaling, batch, seq_len, overlap, local_sgd, backend, pipeline, nocomm = key
    what = f"global batch {batch}" if scaling == "strong" else f"batch {batch} per rank"
    communication = ", no communication (--no-comm)" if nocomm else ("" if overlap else ", no overlap")
    extra = (f", seq {seq_len}" if seq_len is not None else "") + communication + \
            (f", local SGD {local_sgd}" if local_sgd else "") + ("" if backend == "mpi" else f", backend {backend}")
    if pipeline:
        extra += ", pipeline {} stages, {}, M={}".format(*pipeline)
    return f"{trainer} {model}, {scaling} scaling, {what}{extra}"


def scaling_table(points: pd.DataFrame, scaling: str) -> pd.DataFrame:
    """Speedup and efficiency from columns ``ranks`` (``nodes``, ... where known) and ``iteration_s``.

    Rows of one point (its passes) are combined first: ``iteration_s`` and every other numeric
    column become their median, ``iteration_s_min``/``_max`` the range, ``spread`` = (max − min) / median
    and ``passes`` the count.
    p0 = the first point (fewest ranks, then fewest nodes): strong: speedup = t(p0)/t(p),
    efficiency = speedup·p0/p; weak: efficiency = t(p0)/t(p), speedup = efficiency·p/p0.
    ``ideal_speedup`` = p/p0.
    """
    if scaling not in ("strong", "weak"):
        raise ValueError(f"scaling must be 'strong' or 'weak', not {scaling!r}")
    keys = [c for c in POINT_COLUMNS if c in points.columns]
    extra = [c for c in points.columns if c not in (*keys, "iteration_s") and pd.api.types.is_numeric_dtype(points[c])]
    g = points.groupby(keys, sort=True)
    out = g[["iteration_s", *extra]].median()
    out.insert(0, "passes", g.size())
    out["iteration_s_min"] = g["iteration_s"].min()
    out["iteration_s_max"] = g["iteration_s"].max()
    out["spread"] = (out["iteration_s_max"] - out["iteration_s_min"]) / out["iteration_s"]  # pass to pass
    out = out.reset_index()
    p0, t0 = float(out["ranks"].iloc[0]), float(out["iteration_s"].iloc[0])
    ratio = out["ranks"] / p0
    out["ideal_speedup"] = ratio
    for suffix, t in (("", out["iteration_s"]), ("_min", out["iteration_s_max"]), ("_max", out["iteration_s_min"])):
        if scaling == "strong":
            out[f"speedup{suffix}"] = t0 / t
            out[f"efficiency{suffix}"] = out[f"speedup{suffix}"] / ratio
        else:
            out[f"efficiency{suffix}"] = t0 / t
            out[f"speedup{suffix}"] = out[f"efficiency{suffix}"] * ratio
    return out


def scaling_groups(traces: list[Trace], choice: str = "best") -> list[ScalingGroup]:
    """Every configuration with traces at two or more rank counts, with its scaling table.

    Per trace the case ``choice`` is used ('best' = that trace's fastest case, or 'ALG/CAP'); a
    trace without that case is left out of its group. The breakdown columns are the group's
    ``breakdown_components`` (a component an older trace lacks, ``progress_s``, is 0 there).
    """
    by_key: dict[tuple, list[Trace]] = {}
    for t in traces:
        key = scaling_key(t)
        if key is not None:
            by_key.setdefault(key, []).append(t)
    groups = []
    for key in sorted(by_key, key=str):
        rows, used = [], []
        components = breakdown_components(by_key[key])
        for t in sorted(by_key[key], key=lambda t: (t.nranks, str(t.path))):
            case = select_case(t, choice)
            if case is None:
                continue
            per_step, unit = samples_per_step(t)
            pid = point_of(t)
            bd = breakdown_table(t).set_index("case").loc[int(case["case"])]
            rows.append({"ranks": t.nranks, "nodes": pid.nodes, "tasks_per_node": pid.tasks_per_node,
                         "cpus_per_task": pid.cpus_per_task, "iteration_s": float(case["iteration_mean_s"]),
                         "samples_per_step": per_step, **{c: float(bd.get(c, 0.0)) for _, c in components},
                         "case": str(case["label"])})
            used.append(t)
        if len({r["ranks"] for r in rows}) < 2:
            continue
        points = pd.DataFrame(rows)
        table = scaling_table(points.drop(columns=["case"]), key[2])
        table[f"{unit}_per_s"] = table["samples_per_step"] / table["iteration_s"]
        cases = points.groupby(list(POINT_COLUMNS))["case"].agg(lambda s: ", ".join(sorted(set(s))))
        table.insert(len(POINT_COLUMNS) + 1, "case", cases.reindex(pd.MultiIndex.from_frame(table[list(POINT_COLUMNS)])).to_numpy())
        table.insert(0, "point", [f"{n}×{t:g}×{c}" for n, t, c in zip(table["nodes"], table["tasks_per_node"],
                                                                    table["cpus_per_task"])])
        groups.append(ScalingGroup(key, key[2], _group_label(key), unit, used, table, components))
    return groups


def group_slug(group: ScalingGroup) -> str:
    """File-name-safe stem of a scaling group's figures."""
    trainer, model, scaling, batch, seq_len, overlap, local_sgd, backend, pipeline, nocomm = group.key
    text = f"scaling-{trainer}-{model}-{scaling}-{'gb' if scaling == 'strong' else 'rb'}{batch}"
    communication = "-nocomm" if nocomm else ("" if overlap else "-nooverlap")
    text += (f"-seq{seq_len}" if seq_len is not None else "") + communication + \
            (f"-localsgd{local_sgd}" if local_sgd else "") + ("" if backend == "mpi" else f"-{backend}")
    if pipeline:
        text += "-pp{}-{}-mb{}".format(*pipeline)
    return file_stem(text)
