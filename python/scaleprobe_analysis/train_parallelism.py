"""Data parallelism, pipelines and their hybrid side by side: gpt_train points at the same rank count.

A group is the trainer points that run the same configuration (the command line without
``--pipeline-stages``, ``--micro-batches`` and ``--schedule``), scaling mode, backend, launcher
and rank count, in two or more ways of splitting the work: data parallel only (every rank a
replica of the whole model), pipeline only (a stage per rank) or hybrid (stages × data-parallel
replicas). With a fixed global batch they train the same model on the same rows, so the final
loss must agree (gpt_train keeps every step's loss within 1e-5 of the one-rank run) and the step
time says what each split costs.

Per point (passes combined as the median, min–max shown): ``step_ms`` = the slowest rank's step,
mean over summarised steps, of the trace's fastest case (train_tables.breakdown_table);
``tokens_per_s`` = tokens per step ÷ that step; ``vs_dp`` = the data-parallel point's step ÷ this
one's (> 1: faster); ``bubble`` = median over stages of ``train_pipeline.stage_table``'s bubble and
``ideal_bubble`` = (S − 1) / (M + S − 1); ``activations_MiB`` = the most activation bytes one stage
held (counted by gpt_train); ``loss_vs_dp`` = the largest |final loss − the data-parallel point's|
over the passes.
"""
from __future__ import annotations

import hashlib
import shlex

import pandas as pd
from matplotlib.figure import Figure

from . import style
from .campaign import Point, Section
from .textfmt import file_stem, markdown_table
from .train_pipeline import has_pipeline, ideal_bubble, stage_table
from .train_tables import breakdown_table, has_engine_tables

PIPELINE_OPTIONS = ("--pipeline-stages", "--micro-batches", "--schedule")


def split_of(point: Point) -> tuple[int, int, str, int]:
    """(stages, replicas, schedule, micro-batches) of a point; data parallel only: (1, ranks, '', 0)."""
    attrs = point.traces[0].attrs
    stages = int(attrs.get("pipeline_stages", 1) or 1)
    if stages <= 1:
        return 1, point.id.ranks, "", 0
    return (stages, int(attrs.get("pipeline_replicas", 1)), str(attrs.get("pipeline_schedule", "")),
            int(attrs.get("pipeline_micro_batches", 0)))


def split_label(stages: int, replicas: int, schedule: str, micro_batches: int) -> str:
    """'data parallel ×4', 'pipeline 4, 1f1b, M=8' (4 stages) or 'hybrid 2×2, gpipe, M=8' (stages × replicas)."""
    if stages == 1:
        return f"data parallel ×{replicas}"
    shape = f"pipeline {stages}" if replicas == 1 else f"hybrid {stages}×{replicas}"
    return f"{shape}, {schedule}, M={micro_batches}"


def config_without_pipeline(config: str) -> str:
    """The point's configuration with the pipeline options (and their values) taken out."""
    words, out, skip = shlex.split(config), [], False
    for word in words:
        if skip:
            skip = False
        elif word in PIPELINE_OPTIONS:
            skip = True
        elif not word.startswith(tuple(f"{o}=" for o in PIPELINE_OPTIONS)):
            out.append(word)
    return shlex.join(out)


def groups(points: list[Point]) -> list[list[Point]]:
    """The trainer points grouped as the module docstring says; only groups with two or more splits."""
    by_key: dict[tuple, list[Point]] = {}
    for p in points:
        if p.id.bench != "gpt_train" or not all(has_engine_tables(t) for t in p.traces):
            continue
        key = (config_without_pipeline(p.id.config), p.id.scaling, p.id.backend, p.id.launcher, p.id.ranks)
        by_key.setdefault(key, []).append(p)
    out = []
    for key in sorted(by_key):
        mine = sorted(by_key[key], key=lambda p: (split_of(p)[0], -split_of(p)[1], split_of(p)[2]))
        if len({split_of(p) for p in mine}) > 1:
            out.append(mine)
    return out


def _pass_row(trace) -> dict:
    best = breakdown_table(trace)["iteration_s"].min()
    row = {"step_s": best, "tokens_per_s": float(trace.attrs.get("tokens_per_step", 0)) / best,
           "final_loss": float(trace.attrs.get("final_loss", float("nan")))}
    if has_pipeline(trace):
        row["bubble"] = float(stage_table(trace)["bubble"].median())
        row["activation_bytes"] = int(trace.table("pipeline")["activation_bytes"].max())
    return row


def comparison_table(group: list[Point]) -> pd.DataFrame:
    """One row per point of the group (definitions: module docstring)."""
    rows = []
    for p in group:
        stages, replicas, schedule, micro = split_of(p)
        passes = pd.DataFrame([_pass_row(t) for t in p.traces])
        rows.append({"split": split_label(stages, replicas, schedule, micro), "stages": stages, "replicas": replicas,
                     "passes": len(passes), "step_ms": passes["step_s"].median() * 1e3,
                     "step_ms_min": passes["step_s"].min() * 1e3, "step_ms_max": passes["step_s"].max() * 1e3,
                     "tokens_per_s": passes["tokens_per_s"].median(),
                     "bubble": passes["bubble"].median() if "bubble" in passes else float("nan"),
                     "ideal_bubble": ideal_bubble(stages, micro) if stages > 1 else float("nan"),
                     "activations_MiB": passes["activation_bytes"].max() / 2**20 if "activation_bytes" in passes
                     else float("nan"), "losses": passes["final_loss"].tolist()})
    table = pd.DataFrame(rows)
    dp = table[table["stages"] == 1]
    if len(dp):
        table["vs_dp"] = float(dp["step_ms"].iloc[0]) / table["step_ms"]
        dp_loss = dp["losses"].iloc[0][0]
        table["loss_vs_dp"] = [max(abs(x - dp_loss) for x in losses) for losses in table["losses"]]
    return table.drop(columns="losses")


@style.styled
def comparison_figure(group: list[Point], table: pd.DataFrame) -> Figure:
    """The step time of each split (median over passes, min–max as the whisker), data parallel first."""
    p = group[0].id
    caption = (f"{p.ranks} ranks ({p.layout}), {style.status_text(any(g.simulated for g in group))} data; "
               "the slowest rank's step, mean over summarised steps, median over passes (whisker: min–max)")
    fig, (ax,) = style.new_figure("Step time by parallelism", caption, simulated=any(g.simulated for g in group))
    y = list(range(len(table)))[::-1]
    ax.barh(y, table["step_ms"], color=[style.colour(k) for k in range(len(table))],
            xerr=[table["step_ms"] - table["step_ms_min"], table["step_ms_max"] - table["step_ms"]], capsize=2)
    ax.set_yticks(y, table["split"])
    ax.set_xlabel("step time (ms)")
    ax.set_xlim(left=0)
    return fig


def sections(points: list[Point]) -> list[Section]:
    """One section per group of :func:`groups`."""
    out = []
    for group in groups(points):
        p = group[0].id
        table = comparison_table(group)
        config = config_without_pipeline(p.config)
        digest = hashlib.sha1(f"{config}|{p.scaling}|{p.backend}|{p.launcher}".encode()).hexdigest()[:6]
        stem = file_stem(f"parallelism-{p.bench}-{p.ranks}ranks-{digest}")
        intro = [f"gpt_train at {p.ranks} ranks ({p.layout}), the same configuration split "
                 f"{len(table)} ways: `{config}`. Definitions: train_parallelism.py; "
                 "`loss_vs_dp` near zero says every split trained the same model.", ""]
        columns = ["split", "passes", "step_ms", "step_ms_min", "step_ms_max", "tokens_per_s", "vs_dp", "bubble",
                   "ideal_bubble", "activations_MiB", "loss_vs_dp"]
        tables = [markdown_table(table[[c for c in columns if c in table]]), ""]
        out.append(Section(f"training parallelism: {p.ranks} ranks", stem, intro,
                           {"parallelism": comparison_figure(group, table)}, tables))
    return out
