"""Markdown report of a campaign: figures, the tables behind them and each run's provenance.

Trainer traces (kind ``train``) get their cases, latency breakdown, bucket-cap sweep, overlap,
contention and per-rank compute imbalance; a campaign with train traces of one configuration at
several rank counts gets a scaling section first (``train.py`` defines the numbers).

The report states for every trace whether its data is measured (root attribute
``simulated == 0``) or SIMULATED/MODELLED, and warns about things that make numbers
suspect: verification failures, and a machine already loaded when the run started.
"""
from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

import pandas as pd

from .alphabeta import fit_summary
from .imbalance import imbalance_table
from .samples import PER_RANK_KINDS
from .plots import SIMULATED_LABEL, figures_for, save_figure, trace_stem
from .train_plots import group_figures
from .textfmt import format_bytes, markdown_table
from .trace import Campaign, Trace
from .train import (BREAKDOWN, breakdown_table, cases_table, group_slug, has_engine_tables, scaling_groups,
                    step_contention)
from .views import best_caps, contention, series_labels

PROVENANCE_FIELDS = (  # (label, where, key)
    ("machine", "attrs", "machine"),
    ("program", "attrs", "program"),
    ("hosts", "provenance", "hosts"),
    ("hosts (count)", "provenance", "nhosts"),
    ("ranks", "attrs", "nranks"),
    ("OpenMP threads per rank", "provenance", "omp_max_threads"),
    ("online CPUs", "provenance", "online_cpus"),
    ("MPI library", "provenance", "mpi_library_version"),
    ("MPI standard", "provenance", "mpi_standard_version"),
    ("HDF5", "provenance", "hdf5_version"),
    ("compiler", "provenance", "compiler"),
    ("build type", "provenance", "build_type"),
    ("git revision", "provenance", "git_revision"),
    ("scaleprobe version", "provenance", "scaleprobe_version"),
    ("command line", "provenance", "command_line"),
    ("started (UTC)", "provenance", "start_time_utc"),
    ("finished (UTC)", "attrs", "finished_utc"),
    ("load average at start (1/5/15 min)", "provenance", "load_average_start"),
    ("load average at end (1/5/15 min)", "attrs", "load_average_end"),
    ("memory copy bandwidth per rank (GB/s)", "provenance", "memory_copy_GBps_per_rank"),
    ("clock", "provenance", "clock_source"),
)


def data_status_line(trace: Trace) -> str:
    """The sentence saying whether the trace holds measured or modelled data."""
    value = trace.attrs.get("simulated", "missing")
    if trace.simulated:
        return f"**Data: {SIMULATED_LABEL}** (root attribute `simulated` = {value}): not a measurement."
    return "**Data: measured** (root attribute `simulated` = 0)."


def provenance_table(trace: Trace) -> str:
    """Markdown key/value table of the provenance that identifies the run."""
    rows = []
    for label, where, key in PROVENANCE_FIELDS:
        source = trace.attrs if where == "attrs" else trace.provenance
        if key in source and source[key] != "":
            value = str(source[key])
            rows.append((label, f"`{value}`" if key == "command_line" else value))
    return markdown_table(pd.DataFrame(rows, columns=["field", "value"]))


def warnings_for(trace: Trace) -> list[str]:
    """Reasons to distrust the numbers of one trace (empty if none found)."""
    notes = []
    wrong = int(trace.attrs.get("wrong_elements", 0))
    if wrong:
        notes.append(f"{wrong} wrong elements in verification: some results are incorrect.")
    try:
        load1 = float(str(trace.provenance.get("load_average_start", "")).split()[0])
        cpus = int(trace.provenance.get("online_cpus", "0"))
    except (ValueError, IndexError):
        return notes
    if cpus and load1 >= cpus:
        notes.append(f"The machine was already loaded when the run started (1-min load {load1:g} "
                     f"on {cpus} CPUs): timings include contention with other processes.")
    return notes


def _allreduce_tables(trace: Trace) -> list[str]:
    summary = trace.table("summary")
    fits = fit_summary(summary).drop(columns=["fit", "algorithm"])
    view = pd.DataFrame({
        "series": series_labels(summary), "size": summary["bytes"].map(format_bytes),
        "bytes": summary["bytes"], "iters": summary["iters"], "t_mean_us": summary["t_mean_us"],
        "p50_us": summary["p50_us"], "p99_us": summary["p99_us"], "busbw_GBps": summary["busbw_GBps"],
        "vs_mpi": summary["vs_mpi"], "wrong": summary["wrong"]})
    copy_bw = trace.memory_copy_GBps()
    copy_line = (f"Memory copy bandwidth per rank (STREAM-style copy, all ranks at once): {copy_bw:g} GB/s."
                 if copy_bw is not None else "Memory copy bandwidth: not measured.")
    return ["### α–β fit (t = α + β·n, least squares on relative error, α, β ≥ 0)",
            markdown_table(fits), "",
            "### Latency and bus bandwidth (figures a, b)", copy_line, "", markdown_table(view)]


def _bucket_tables(trace: Trace) -> list[str]:
    summary = trace.table("summary")
    in_ms = {f"{c}_us": f"{c}_ms" for c in ("t_mean", "p50", "p99")}
    view = summary[["algorithm", "cap", "buckets", "iters", *in_ms, "busbw_GBps", "wrong"]]
    view = view.assign(**{c: view[c] / 1e3 for c in in_ms}).rename(columns=in_ms)
    best = best_caps(summary)
    best = best.assign(**{c: best[c] / 1e3 for c in in_ms}).rename(columns=in_ms)
    return [f"### Bucket cap sweep (figure c): layout `{trace.attrs.get('layout', '?')}`, "
            f"{summary['bytes'].iloc[0] / 2**20:.4g} MiB of gradients per iteration",
            markdown_table(view), "", "Best cap per algorithm (lowest mean time per iteration):", "",
            markdown_table(best)]


IMBALANCE_TABLE_ROWS = 10


def _imbalance_lines(trace: Trace) -> list[str]:
    """The most imbalanced cases: each rank's mean time (from ``samples``) vs the mean over ranks."""
    if trace.kind not in PER_RANK_KINDS or (trace.kind == "train" and (not has_engine_tables(trace) or trace.nranks < 2)):
        return []
    table = imbalance_table(trace)
    if table.empty:
        return []
    shown = table.nlargest(IMBALANCE_TABLE_ROWS, "imbalance_pct")
    which = "all cases" if len(shown) == len(table) else f"the {len(shown)} most imbalanced of {len(table)} cases"
    if trace.kind == "train":
        what = ("Each rank's mean compute time per step (forward + backward + optimizer, from `iterations`, "
                f"summarised steps) against the mean over ranks; {which}. `imbalance_pct` = slowest rank's mean "
                "÷ mean over ranks − 1; every other rank waits for the slowest in the gradient allreduce.")
    else:
        what = (f"Each rank's mean time per case (from `samples`) against the mean over ranks; {which}. "
                "`imbalance_pct` = slowest rank's mean ÷ mean over ranks − 1. In a collective the rank "
                "that arrives last waits least, so a slow rank often means its peers were late.")
    return ["", "### Per-rank imbalance (figure: imbalance)", what, "", markdown_table(shown)]


def _train_tables(trace: Trace) -> list[str]:
    """A trainer run: where a step's time goes (summary, first step excluded) and every step."""
    lines = ["### Step-phase profile",
             f"Mean, median and fastest wall time per step and each phase's share; "
             f"{trace.attrs.get('summary_excludes', 'the first step')} is excluded.", "",
             markdown_table(trace.table("summary")), ""]
    if "steps" in trace.tables:
        steps = trace.table("steps")
        cols = [c for c in ("step", "loss", "val_loss", "lr", "grad_norm", "step_wall_s", "step_process_cpu_s",
                            "tokens_per_s") if c in steps.columns]
        lines += ["### Steps", "", markdown_table(steps[cols]), ""]
    return lines


def _in_ms(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Seconds columns ``x_s`` → milliseconds ``x_ms``."""
    renamed = {c: c[:-2] + "_ms" for c in columns}
    return frame.assign(**{c: frame[c] * 1e3 for c in columns}).rename(columns=renamed)


def _engine_tables(trace: Trace) -> list[str]:
    """Cases, breakdown, bucket caps, overlap and contention of a train trace from the data-parallel engine."""
    cases = cases_table(trace)
    rate = [c for c in cases.columns if c.endswith("_per_s") and c != "samples_per_s"]
    view = cases[["label", "buckets", "steps", "iteration_mean_s", "iteration_median_s", "iteration_min_s",
                  "compute_mean_s", "comm_mean_s", "exposed_comm_mean_s", "overlap_mean", "compute_imbalance",
                  "slowest_rank", "samples_per_s", *rate, "best"]]
    view = _in_ms(view, [c for c in view.columns if c.endswith("_s") and not c.endswith("_per_s")])
    view = view.assign(best=view["best"].map({True: "★", False: ""}))
    bd = breakdown_table(trace)
    bd_view = _in_ms(bd[["label", "steps", *[c for _, c in BREAKDOWN], "iteration_s", "sum_s"]],
                     [*[c for _, c in BREAKDOWN], "iteration_s", "sum_s"])
    bd_view = bd_view.rename(columns={"exposed_ms": "exposed_ms (wait+average)"})
    best = cases.loc[cases.groupby("algorithm", sort=False)["iteration_mean_s"].idxmin()] \
        if cases["iteration_mean_s"].notna().any() else cases.iloc[0:0]
    best_view = _in_ms(best[["algorithm", "bucket_cap", "buckets", "iteration_mean_s", "exposed_comm_mean_s",
                             "overlap_mean"]], ["iteration_mean_s", "exposed_comm_mean_s"])
    cont = step_contention(trace)
    return [f"### Cases (algorithm × bucket cap): {trace.attrs.get('scaling', '?')} scaling, global batch "
            f"{trace.attrs.get('global_batch', '?')}, {trace.attrs.get('num_cases', len(cases))} case(s) cycled step by step",
            "Iteration time = the slowest rank's step time, over the summarised steps "
            f"({trace.attrs.get('summary_excludes', 'first step excluded')}); compute, communication and exposed "
            "communication are means over steps and ranks; `overlap_mean` = 1 − wait / allreduce time. "
            "★ = fastest case.", "", markdown_table(view), "",
            "### Per-iteration latency breakdown (figure: breakdown)",
            "Mean over summarised steps of the **slowest rank's** phases in each step, so the components add "
            "up to the time per iteration (`sum_ms` vs `iteration_ms`).", "", markdown_table(bd_view), "",
            "### Bucket cap sweep (figures: bucket_caps, overlap)",
            "Best cap per algorithm (lowest time per iteration):", "", markdown_table(best_view), "",
            "### Contention indicator (figure: contention): process CPU / (wall × compute threads)",
            "Per rank and case over the summarised steps. Below 1 the rank's threads waited (blocked, or runnable "
            "on a busy core); the communication thread's CPU counts in the process CPU, so values above 1 are "
            "possible. `comm_cpu_wall` = that thread's CPU / allreduce wall time.", "", markdown_table(cont), ""]


def scaling_section(campaign: Campaign, out_dir: Path, case: str = "best") -> list[str]:
    """Strong/weak scaling of train traces at several rank counts: figures and tables ([] if none)."""
    groups = scaling_groups(campaign.of_kind("train"), case)
    if not groups:
        if case != "best" and scaling_groups(campaign.of_kind("train")):
            return ["## Scaling of the trainer runs", "",
                    f"No scaling series: case `{case}` is not in two or more rank counts of any configuration "
                    "(use `--case best` or one of the cases listed in the trace sections).", ""]
        return []
    which = ("each trace's fastest case (algorithm, bucket cap)" if case == "best" else f"case `{case}`")
    lines = ["## Scaling of the trainer runs", "",
             f"Traces grouped by trainer, model, scaling mode, batch (strong: global batch; weak: batch per rank), "
             f"sequence length, overlap and local SGD. Time per iteration t = the slowest rank's step time, mean "
             f"over summarised steps, of {which}; several runs at one rank count are averaged (`runs`). "
             "p0 = the smallest rank count. Strong scaling: speedup = t(p0)/t(p), efficiency = speedup·p0/p "
             "(= t1/(p·tp) from 1 rank). Weak scaling: efficiency = t(p0)/t(p), speedup = efficiency·p/p0 "
             "(the throughput ratio).", ""]
    for group in groups:
        stem = group_slug(group)
        lines += [f"### {group.label}", ""]
        for name, fig in group_figures(group).items():
            png, svg = save_figure(fig, out_dir / "figures", f"{stem}-{name}")
            rel_png, rel_svg = (os.path.relpath(p, out_dir) for p in (png, svg))
            lines += [f"![{stem} {name}]({rel_png})", f"({name}: [SVG]({rel_svg}))", ""]
        tab = group.table
        rate = f"{group.unit}_per_s"
        view = _in_ms(tab[["ranks", "runs", "case", "iteration_s", "speedup", "ideal_speedup", "efficiency", rate]],
                      ["iteration_s"])
        lines += [f"{group.scaling.capitalize()} scaling (traces: "
                  f"{', '.join(trace_stem(campaign, t) for t in group.traces)}):", "", markdown_table(view), "",
                  "Breakdown per rank count (ms; slowest rank's phases, chosen case):", "",
                  markdown_table(_in_ms(tab[["ranks", "case", *[c for _, c in BREAKDOWN], "iteration_s"]],
                                        [*[c for _, c in BREAKDOWN], "iteration_s"])), ""]
    return lines


def trace_section(campaign: Campaign, trace: Trace, out_dir: Path) -> str:
    """The report section for one trace; saves its figures under ``out_dir/figures``."""
    stem = trace_stem(campaign, trace)
    lines = [f"## {stem}: {trace.kind} ({trace.attrs.get('program', '?')})", "",
             data_status_line(trace), ""]
    lines += [f"> **Warning:** {w}" for w in warnings_for(trace)] + [""]
    lines += ["### Provenance", provenance_table(trace), ""]
    if "ranks" in trace.tables:
        lines += ["Rank placement (rank → host → core):", "", markdown_table(trace.tables["ranks"]), ""]
    lines += ["### Figures", ""]
    for name, fig in figures_for(trace).items():
        png, svg = save_figure(fig, out_dir / "figures", f"{stem}-{name}")
        rel_png, rel_svg = (os.path.relpath(p, out_dir) for p in (png, svg))
        lines += [f"![{stem} {name}]({rel_png})", f"({name}: [SVG]({rel_svg}))", ""]
    if trace.kind == "allreduce":
        lines += _allreduce_tables(trace)
    elif trace.kind == "bucket_sweep":
        lines += _bucket_tables(trace)
    elif trace.kind == "train":
        if has_engine_tables(trace):
            lines += _engine_tables(trace)
        lines += _train_tables(trace)
        lines += _imbalance_lines(trace)
    if "summary" in trace.tables and trace.kind in ("allreduce", "bucket_sweep"):
        lines += ["", "### Contention indicator (figure d): CPU time / wall time of the timing thread",
                  "Below 1 the thread waited (blocked, or runnable on a busy core); above 1 for "
                  "sub-µs calls is the cost of reading the CPU clock.", "",
                  markdown_table(contention(trace.table("summary"), trace.kind))]
        lines += _imbalance_lines(trace)
    return "\n".join(lines) + "\n"


def write_report(campaign: Campaign, out_dir: str | Path, case: str = "best") -> Path:
    """Write ``report.md`` and its figures into ``out_dir``; return the report's path.

    ``case`` picks the train case the scaling section uses: 'best' or 'ALGORITHM/CAP'.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    simulated = [trace_stem(campaign, t) for t in campaign.traces if t.simulated]
    if simulated:
        status = (f"**{SIMULATED_LABEL} data present** in {len(simulated)} of {len(campaign.traces)} "
                  f"trace(s): {', '.join(simulated)}. Those numbers are not measurements.")
    else:
        status = f"**All {len(campaign.traces)} trace(s) hold measured data** (root attribute `simulated` = 0)."
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    index = markdown_table(pd.DataFrame(
        [(trace_stem(campaign, t), t.kind, t.machine, t.nranks, "SIMULATED/MODELLED" if t.simulated else "measured")
         for t in campaign.traces], columns=["trace", "kind", "machine", "ranks", "data"]))
    parts = ["# scaleprobe campaign report", "",
             f"Campaign `{campaign.root}`, {len(campaign.traces)} trace(s); report generated {now}.", "",
             status, "", index, ""]
    parts += scaling_section(campaign, out_dir, case)
    parts += [trace_section(campaign, t, out_dir) for t in campaign.traces]
    path = out_dir / "report.md"
    path.write_text("\n".join(parts))
    return path
