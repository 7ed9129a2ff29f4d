"""Markdown report of a campaign: figures, the tables behind them and each run's provenance.

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
from .samples import CASE_PHASE
from .plots import SIMULATED_LABEL, figures_for, save_figure, trace_stem
from .textfmt import format_bytes, markdown_table
from .trace import Campaign, Trace
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
    if trace.kind not in CASE_PHASE:
        return []
    table = imbalance_table(trace)
    if table.empty:
        return []
    shown = table.nlargest(IMBALANCE_TABLE_ROWS, "imbalance_pct")
    which = "all cases" if len(shown) == len(table) else f"the {len(shown)} most imbalanced of {len(table)} cases"
    return ["", "### Per-rank imbalance (figure: imbalance)",
            f"Each rank's mean time per case (from `samples`) against the mean over ranks; {which}. "
            "`imbalance_pct` = slowest rank's mean ÷ mean over ranks − 1. In a collective the rank "
            "that arrives last waits least, so a slow rank often means its peers were late.", "",
            markdown_table(shown)]


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
        lines += _train_tables(trace)
    if "summary" in trace.tables and trace.kind in ("allreduce", "bucket_sweep"):
        lines += ["", "### Contention indicator (figure d): CPU time / wall time of the timing thread",
                  "Below 1 the thread waited (blocked, or runnable on a busy core); above 1 for "
                  "sub-µs calls is the cost of reading the CPU clock.", "",
                  markdown_table(contention(trace.table("summary"), trace.kind))]
        lines += _imbalance_lines(trace)
    return "\n".join(lines) + "\n"


def write_report(campaign: Campaign, out_dir: str | Path) -> Path:
    """Write ``report.md`` and its figures into ``out_dir``; return the report's path."""
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
    parts += [trace_section(campaign, t, out_dir) for t in campaign.traces]
    path = out_dir / "report.md"
    path.write_text("\n".join(parts))
    return path
