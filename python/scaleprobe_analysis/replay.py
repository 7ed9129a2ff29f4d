"""Kind ``replay`` (step_replay, docs/simulation.md): a measured training run replayed on a
simulated cluster. Its times are SIMULATED (compute as measured, communication simulated), and
every figure and table here says so.

**One trace.** Figure ``replay_steps``: per case the measured and the predicted median step, and
the measured and predicted wait after backward (the slowest rank's, median over the steps). Table:
the ``cases`` table, with the error where the rank counts match. A case is a row of ``cases``
('ring cap 25'); its per-step times are the ``steps`` table's ``step_s``.

**Across points** (replays of one measured run at several simulated rank counts, e.g. from
scripts/simulate with more hosts): per case the predicted median step and wait against the
simulated ranks, the measured run's own point beside them.
"""
from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from . import style
from .campaign import BackendCases, Options, Point, Section, cross_point_sweeps, data_note, points_caption, sweep_stem
from .textfmt import markdown_table
from .trace import Trace

SUMMARY_TABLE = "cases"
KIND = "replay"
CASE_KEYS = ("algorithm", "bucket_cap")
CASE_AXIS = "case: allreduce algorithm and bucket cap"
IMBALANCE_NOTE = "simulated step times per rank: each rank replays a measured rank's compute (SIMULATED)"
TIMELINE_NOTE = ""
MS = 1e3


def _cases(trace: Trace) -> pd.DataFrame:
    return trace.table("cases")


def case_labels(trace: Trace) -> pd.Series:
    c = _cases(trace)
    return pd.Series([f"{a} cap {cap}" for a, cap in zip(c["algorithm"], c["bucket_cap"])], index=c["case"])


def rank_times(trace: Trace) -> pd.DataFrame:
    """Per rank, case and replayed step the simulated step time (µs); no CPU time in a simulation."""
    s = trace.table("steps")
    return pd.DataFrame({"rank": s["rank"], "case": s["case"], "iteration": s["step"],
                         "wall_us": s["step_s"] * 1e6, "cpu_us": float("nan")}).reset_index(drop=True)


def iteration_times(trace: Trace) -> pd.DataFrame:
    return rank_times(trace).groupby(["case", "iteration"], as_index=False)["wall_us"].max()


def case_table(trace: Trace) -> pd.DataFrame:
    """``cases`` with ``t_mean_us`` and ``p50_us`` of the slowest rank's simulated steps (for compare)."""
    per = iteration_times(trace).groupby("case")["wall_us"]
    return _cases(trace).assign(t_mean_us=lambda c: c["case"].map(per.mean()),
                                p50_us=lambda c: c["case"].map(per.median()))


def case_args(trace: Trace) -> dict[int, dict]:
    return {int(r["case"]): {"algorithm": r["algorithm"], "bucket_cap": r["bucket_cap"]}
            for r in _cases(trace).to_dict("records")}


def timeline_events(trace: Trace, pid: int, samples: pd.DataFrame):
    return None


def _source(trace: Trace) -> str:
    return (f"{trace.attrs.get('source_trace', '?')} ({int(trace.attrs.get('source_ranks', 0))} measured ranks, "
            f"overlap {trace.attrs.get('overlap_mode', '?')})")


@style.styled
def steps_figure(trace: Trace) -> Figure:
    """Per case: measured and predicted median step (left), measured and predicted wait (right)."""
    c = _cases(trace)
    labels = list(case_labels(trace))
    fig, (step, wait) = style.new_figure(
        "Replayed step: measured beside predicted", style.trace_caption(
            trace, f"replay of {_source(trace)} on {trace.nranks} simulated ranks; median over the steps of the "
                   "slowest rank's; compute as measured, communication simulated"),
        panels=2, simulated=True)
    x = range(len(c))
    for ax, (measured, predicted, what) in ((step, ("measured_median_s", "predicted_median_s", "step (ms)")),
                                            (wait, ("measured_wait_median_s", "predicted_wait_median_s",
                                                    "wait after backward (ms)"))):
        ax.bar([k - 0.2 for k in x], c[measured] * MS, width=0.4, color=style.colour(0),
               label=f"measured ({int(trace.attrs.get('source_ranks', 0))} ranks)")
        ax.bar([k + 0.2 for k in x], c[predicted] * MS, width=0.4, color=style.colour(1),
               label=f"predicted ({trace.nranks} ranks)")
        ax.set_xticks(list(x), labels, rotation=30, ha="right", fontsize=7)
        style.finish_from_zero(ax, what)
    return fig


def figures(trace: Trace) -> dict[str, Figure]:
    return {"replay_steps": steps_figure(trace)}


def report_tables(trace: Trace) -> list[str]:
    c = _cases(trace).copy()
    for col in ("measured_median_s", "predicted_median_s", "measured_wait_median_s", "predicted_wait_median_s"):
        c[col.replace("_s", "_ms")] = c[col] * MS
    c["error_%"] = c["error"] * 100
    columns = ["case", "algorithm", "bucket_cap", "buckets", "steps", "measured_median_ms", "predicted_median_ms",
               "error_%", "measured_wait_median_ms", "predicted_wait_median_ms"]
    return [f"#### SIMULATED step replay (figure: replay_steps): {_source(trace)} on {trace.nranks} simulated ranks; "
            "compute as measured, communication simulated; the error only where the rank counts match", "",
            markdown_table(c[columns]), ""]


# --- across points ---------------------------------------------------------------------------------

def sweep_table(points: list[Point]) -> pd.DataFrame:
    """Per point and case (passes: the median): simulated ranks, predicted step and wait, the measured ones."""
    rows = []
    for p in points:
        for t in p.traces:
            for r in _cases(t).to_dict("records"):
                rows.append({"ranks": p.id.ranks, "case": f"{r['algorithm']} cap {r['bucket_cap']}",
                             "measured_ranks": int(t.attrs.get("source_ranks", 0)),
                             "measured_ms": r["measured_median_s"] * MS, "predicted_ms": r["predicted_median_s"] * MS,
                             "predicted_wait_ms": r["predicted_wait_median_s"] * MS})
    table = pd.DataFrame(rows)
    return table.groupby(["case", "ranks"], as_index=False).median(numeric_only=True).sort_values(["case", "ranks"])


@style.styled
def points_figure(table: pd.DataFrame, points: list[Point]) -> Figure:
    """Against the simulated ranks, one line per case: the predicted median step (left; its axis not
    from zero, the growth is small against the compute) and wait after backward (right); the measured
    run's step hollow."""
    fig, (step, wait) = style.new_figure("Replayed step against ranks", points_caption(points), panels=2,
                                         simulated=True)
    for k, (case, part) in enumerate(table.groupby("case", sort=False)):
        step.plot(part["ranks"], part["predicted_ms"], "o-", color=style.colour(k), label=f"{case} (predicted)")
        first = part.iloc[0]
        step.plot([first["measured_ranks"]], [first["measured_ms"]], "o", mfc="none", color=style.colour(k),
                  label=f"{case} (measured)")
        wait.plot(part["ranks"], part["predicted_wait_ms"], "o-", color=style.colour(k), label=case)
    for ax in (step, wait):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("simulated ranks")
    step.set_ylabel("median step (ms)")
    style.finish_from_zero(wait, "wait after backward (ms)")
    style.legend_outside(step)
    return fig


def campaign_sections(points: list[Point], options: Options) -> list[Section]:
    return [sweep_section(sweep) for sweep in cross_point_sweeps(points)]


def sweep_section(points: list[Point]) -> Section:
    table = sweep_table(points)
    intro = [f"SIMULATED: `{points[0].id.config}` replayed at {', '.join(str(p.id.ranks) for p in points)} simulated "
             "ranks (compute as measured, communication simulated; docs/simulation.md). Predicted: median over the "
             "steps of the slowest rank's step; the measured run's own point is hollow.", "",
             *data_note([t for p in points for t in p.traces])]
    return Section("Step replay across simulated rank counts (SIMULATED)", sweep_stem(points), intro,
                   {"replay_by_ranks": points_figure(table, points)},
                   ["#### Predicted median step and wait per simulated rank count (ms)", "", markdown_table(table), ""])


def backend_cases(points: list[Point]) -> BackendCases:
    table = sweep_table(points).assign(point=lambda t: t["ranks"].astype(str))
    return BackendCases(table, ["case"], {"predicted_ms": "predicted median step (ms)"})
