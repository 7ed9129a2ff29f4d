"""A pipelined gpt_train run (``--pipeline-stages``): the bubble per stage and the schedule as it ran.

The trace's ``pipeline`` table gives per rank and step the stage's schedule time and its compute
time; ``bubble`` = 1 − compute / schedule is the share of the schedule the stage spent waiting for
its neighbours or sending. With balanced stages both schedules' ideal is (S − 1) / (M + S − 1)
(GPipe and 1F1B idle alike; 1F1B holds fewer activations). ``pipeline_ops`` gives every forward and
backward of every micro-batch with its receive, compute and send times, from which
:func:`pipeline_figure` draws one step per stage (the step whose schedule time is the median of
the summarised steps, the first step left out).

How much of a bubble the messages cost: :func:`free_message_replay` runs each step's ops again in
the order each stage ran them, with their measured compute times, every message arriving the moment
it is sent. What bubble is left (``bubble_free_messages``) is the schedule's and the stages'
imbalance; the rest of the measured bubble is time spent on or waiting for messages.
"""
from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from . import style
from .textfmt import markdown_table
from .trace import Trace

PASS_COLOURS = {"forward": "#4c72b0", "backward": "#55a868"}
WAIT_COLOUR, SEND_COLOUR = "#e8a2a4", "#c44e52"


def has_pipeline(trace: Trace) -> bool:
    """True for a trace of a pipelined run that recorded its schedule (``pipeline_ops``)."""
    return "pipeline_ops" in trace.tables and "bubble" in trace.table("pipeline").columns


def ideal_bubble(stages: int, micro_batches: int) -> float:
    """The bubble of S balanced stages over M micro-batches under GPipe or 1F1B: (S − 1) / (M + S − 1)."""
    return (stages - 1) / (micro_batches + stages - 1)


def _shape(trace: Trace) -> tuple[int, int]:
    return int(trace.attrs["pipeline_stages"]), int(trace.attrs["pipeline_micro_batches"])


def _summarised(table: pd.DataFrame) -> pd.DataFrame:
    """The steps after the first (which warms the caches), or every step of a one-step run."""
    later = table[table["step"] > table["step"].min()]
    return later if len(later) else table


def free_message_replay(ops: pd.DataFrame, stages: int) -> list[tuple[float, float]]:
    """One step of one replica (``pipeline_ops`` rows with a ``stage`` column) replayed with messages
    that take no time: each stage runs its ops in the order it ran them (by ``start_s``), each for its
    measured ``compute_s``, starting as soon as the stage is free and its input exists — forward m
    after the previous stage's forward m, backward m after the next stage's backward m. Per stage:
    (schedule, compute) in seconds, the schedule from the step's start to the end of its last op."""
    order = [list(ops[ops["stage"] == s].sort_values("start_s")[["pass", "micro", "compute_s"]].itertuples(index=False))
             for s in range(stages)]
    end: dict[tuple[int, str, int], float] = {}
    free, done = [0.0] * stages, [0] * stages
    progressed = True
    while progressed:
        progressed = False
        for s in range(stages):
            while done[s] < len(order[s]):
                kind, micro, compute = order[s][done[s]]
                source = s - 1 if kind == "forward" else s + 1
                needs = (source, kind, int(micro)) if 0 <= source < stages else None
                if needs is not None and needs not in end:
                    break
                start = max(free[s], end[needs] if needs is not None else 0.0)
                end[(s, kind, int(micro))] = free[s] = start + float(compute)
                done[s] += 1
                progressed = True
    if any(done[s] < len(order[s]) for s in range(stages)):
        raise ValueError("pipeline_ops: a step's ops wait on each other (no order the stages could have run)")
    return [(free[s], float(sum(op.compute_s for op in order[s]))) for s in range(stages)]


def _free_message_schedules(ops: pd.DataFrame, stages: int) -> pd.DataFrame:
    """Per replica, step and stage: schedule_s and compute_s of :func:`free_message_replay`."""
    rows = []
    ops = ops.assign(replica=ops["rank"] // stages)
    for (replica, step), one in ops.groupby(["replica", "step"]):
        for stage, (schedule, compute) in enumerate(free_message_replay(one, stages)):
            rows.append({"replica": replica, "step": step, "stage": stage, "schedule_s": schedule,
                         "compute_s": compute})
    return pd.DataFrame(rows)


def _bubble(table: pd.DataFrame) -> pd.Series:
    return (1 - table["compute_s"] / table["schedule_s"]).where(table["schedule_s"] > 0, 0.0)


def _span_bubble(table: pd.DataFrame) -> float:
    """Per replica and step, 1 − the stages' mean compute / the longest stage schedule (the step's span:
    the first stage starts first and ends last under GPipe and 1F1B); the median over them. Balanced
    stages give (S − 1) / (M + S − 1); a stage's own bubble counts only its own schedule."""
    per_step = table.groupby(["replica", "step"]).agg(compute_s=("compute_s", "mean"), span_s=("schedule_s", "max"))
    return float((1 - per_step["compute_s"] / per_step["span_s"]).median())


def pipeline_bubble(trace: Trace) -> dict[str, float]:
    """The whole pipeline's bubble over the step's span (:func:`_span_bubble`), as measured and with free
    messages (:func:`free_message_replay`), beside the closed form, over the summarised steps."""
    stages, micro_batches = _shape(trace)
    steps = _summarised(trace.table("pipeline")).assign(replica=lambda t: t["rank"] // stages)
    ops = _summarised(trace.table("pipeline_ops")).assign(stage=lambda t: t["rank"] % stages)
    return {"measured": _span_bubble(steps), "free_messages": _span_bubble(_free_message_schedules(ops, stages)),
            "closed_form": ideal_bubble(stages, micro_batches)}


def stage_table(trace: Trace) -> pd.DataFrame:
    """Per stage (over its replicas and the summarised steps): medians of schedule, compute, bubble and
    the bubble with free messages."""
    stages, micro_batches = _shape(trace)
    steps = _summarised(trace.table("pipeline")).assign(stage=lambda t: t["rank"] % stages)
    ops = _summarised(trace.table("pipeline_ops")).assign(stage=lambda t: t["rank"] % stages)
    per_step = ops.groupby(["rank", "step", "stage"])[["recv_s", "send_s"]].sum().reset_index()
    table = steps.groupby("stage").agg(steps=("step", "size"), schedule_s=("schedule_s", "median"),
                                       compute_s=("compute_s", "median"), bubble=("bubble", "median"),
                                       bubble_min=("bubble", "min"), bubble_max=("bubble", "max"))
    table = table.join(per_step.groupby("stage")[["recv_s", "send_s"]].median())
    free = _free_message_schedules(ops, stages)
    table = table.join(free.assign(bubble_free_messages=_bubble(free)).groupby("stage")["bubble_free_messages"].median())
    table["ideal_bubble"] = ideal_bubble(stages, micro_batches)
    return table.reset_index()


def report_lines(trace: Trace) -> list[str]:
    """The pipeline section of a pipelined train trace's report (empty for any other trace)."""
    if not has_pipeline(trace):
        return []
    stages, micro_batches = _shape(trace)
    view = stage_table(trace)
    for col in ("schedule_s", "compute_s", "recv_s", "send_s"):
        view[col.replace("_s", "_ms")] = view.pop(col) * 1e3
    view = view[["stage", "steps", "schedule_ms", "compute_ms", "recv_ms", "send_ms", "bubble", "bubble_min",
                 "bubble_max", "bubble_free_messages", "ideal_bubble"]]
    return ["#### Pipeline schedule (figure: pipeline)", "",
            f"{trace.attrs.get('pipeline_schedule', '?')}, {stages} stages × {trace.attrs.get('pipeline_replicas', 1)} "
            f"replica(s), {micro_batches} micro-batches of {trace.attrs.get('pipeline_micro_rows', '?')} rows; stages "
            f"{trace.attrs.get('pipeline_layers', '?')}. Per stage over its replicas and the steps after the first "
            "(medians; `bubble_min`/`bubble_max` over the same steps): `schedule_ms` = the step's schedule on the "
            "stage, `compute_ms` = its forwards and backwards, `recv_ms`/`send_ms` = blocked receiving from and "
            "sending to its neighbours, `bubble` = 1 − compute / schedule, `bubble_free_messages` = the bubble "
            "left when the same ops, in each stage's order and with their measured compute times, are replayed "
            "with messages that take no time (the schedule's and the stages' imbalance; the rest of `bubble` is "
            "messages), `ideal_bubble` = (S − 1) / (M + S − 1), balanced stages' bubble under GPipe and 1F1B "
            "alike.", "", markdown_table(view), "",
            "The whole pipeline (per step, 1 − the stages' mean compute / the longest stage's schedule, the median "
            "over the steps): bubble {measured:.3f} as measured, {free_messages:.3f} with free messages, closed "
            "form {closed_form:.3f}.".format(**pipeline_bubble(trace)), ""]


def _median_step(steps: pd.DataFrame) -> int:
    """The summarised step whose schedule time (its slowest stage's) is nearest the median."""
    later = _summarised(steps)
    per_step = later.groupby("step")["schedule_s"].max()
    return int(per_step.index[(per_step - per_step.median()).abs().argmin()])


@style.styled
def pipeline_figure(trace: Trace) -> Figure:
    """One step of replica 0's stages as they ran: each forward and backward, with the waits and sends."""
    stages, micro_batches = _shape(trace)
    ops, steps = trace.table("pipeline_ops"), trace.table("pipeline")
    step = _median_step(steps)
    caption = (f"{trace.attrs.get('pipeline_schedule', '?')}, {stages} stages, {micro_batches} micro-batches; step "
               f"{step} (median schedule time), replica 0, each stage's own clock from the step's start")
    fig, (ax,) = style.new_figure("Pipeline schedule", style.trace_caption(trace, caption), simulated=trace.simulated)
    shown = ops[(ops["step"] == step) & (ops["rank"] < stages)].rename(columns={"pass": "kind"})
    for row in shown.itertuples():
        y = -int(row.rank)
        t = row.start_s * 1e3
        ax.barh(y, row.recv_s * 1e3, left=t, height=0.3, color=WAIT_COLOUR)
        t += row.recv_s * 1e3
        ax.barh(y, row.compute_s * 1e3, left=t, height=0.7, color=PASS_COLOURS[row.kind], edgecolor="white")
        ax.text(t + row.compute_s * 5e2, y, str(row.micro), ha="center", va="center", fontsize=7, color="white")
        ax.barh(y, row.send_s * 1e3, left=t + row.compute_s * 1e3, height=0.3, color=SEND_COLOUR)
    ax.set_yticks([-s for s in range(stages)], [f"stage {s}" for s in range(stages)])
    ax.set_xlabel("time from the step's start (ms)")
    for label, colour in [*PASS_COLOURS.items(), ("receiving (waiting)", WAIT_COLOUR), ("sending", SEND_COLOUR)]:
        ax.barh(0, 0, color=colour, label=label)
    style.legend_outside(ax)
    return fig
