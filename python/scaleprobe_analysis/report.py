"""The markdown report of a campaign: its status, the cross-point sections, then every trace.

Order: the campaign status (``campaign_status.status_lines``: what was expected, what is missing,
failed, incomplete or unreadable, the points and the machines), one section per sweep of each
kind (``campaign_sections`` of ``allreduce.py``, ``bucket_sweep.py``, ``train.py``: figures
first, then the tables), then "Per-trace details": for every valid trace its data status,
warnings, provenance, rank placement, figures and tables.

The report states for every trace whether its data is measured (root attribute
``simulated == 0``) or SIMULATED/MODELLED, and warns about things that make numbers suspect:
verification failures, and a machine already loaded when the run started.

**Reproducible.** The report holds no generation time and lists everything in a fixed order, and
the figures are deterministic (``style.py``), so the same traces give byte-identical files. It is
written into a temporary folder beside the output first; the figures are then moved in, and
``report.md`` last, so an error never leaves a half-written report.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from . import imbalance
from .campaign import Options, Section, trace_stem
from .campaign_status import CampaignScan, status_lines
from .kinds import module_for
from .plots import campaign_sections, figures_for
from .style import SIMULATED_LABEL, save_figure, status_text
from .textfmt import markdown_table
from .trace import Trace

PROVENANCE_FIELDS = (  # (label, where, key)
    ("machine", "attrs", "machine"),
    ("CPU", "provenance", "cpu_model"),
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
    timing_only = int(trace.attrs.get("timing_only_cases", 0))
    if timing_only:
        notes.append(f"{timing_only} case(s) ran timing only on SMPI shared buffers (SIMULATED): their "
                     "results were not verified (wrong = -1).")
    try:
        load1 = float(str(trace.provenance.get("load_average_start", "")).split()[0])
        cpus = int(trace.provenance.get("online_cpus", "0"))
    except (ValueError, IndexError):
        return notes
    if cpus and load1 >= cpus:
        notes.append(f"The machine was already loaded when the run started (1-min load {load1:g} "
                     f"on {cpus} CPUs): timings include contention with other processes.")
    return notes


def _figure_lines(figures: dict, stem: str, out_dir: Path) -> list[str]:
    """Save ``figures`` as ``figures/<stem>-<name>.{png,svg}`` below ``out_dir``; markdown linking them."""
    lines = []
    for name, fig in figures.items():
        png, svg = (os.path.relpath(p, out_dir) for p in save_figure(fig, out_dir / "figures", f"{stem}-{name}"))
        lines += [f"![{stem} {name}]({png})", f"({name}: [SVG]({svg}))", ""]
    return lines


# Said where a text-only report (write_report(..., figures=False)) leaves a section's figures out.
FIGURES_LEFT_OUT = "Figures left out: this report was written without figures."


def section_lines(section: Section, out_dir: Path, figures: bool = True) -> list[str]:
    """A cross-point section: heading, what it shows, its figures (when asked), its tables."""
    shown = _figure_lines(section.figures, section.stem, out_dir) if figures else [FIGURES_LEFT_OUT, ""]
    return [f"## {section.title}", "", *section.intro, *shown, *section.tables]


# Per-trace figures in a campaign report: drawn for small campaigns only. A 90-trace campaign would
# otherwise write about 900 files (70 MB) that repeat what the cross-point sections show.
AUTO_TRACE_FIGURES = 12
TRACE_FIGURES = ("auto", "all", "none")


def draw_trace_figures(choice: str, ntraces: int) -> bool:
    """Whether the per-trace sections get their figures: 'all', 'none', or 'auto' (small campaigns)."""
    if choice not in TRACE_FIGURES:
        raise ValueError(f"trace figures must be one of {', '.join(TRACE_FIGURES)}, not {choice!r}")
    return choice == "all" or (choice == "auto" and ntraces <= AUTO_TRACE_FIGURES)


def trace_section(root: Path, trace: Trace, out_dir: Path, figures: bool = True, text_only: bool = False) -> list[str]:
    """The report section for one trace; saves its figures under ``out_dir/figures`` when asked
    (``text_only``: the whole report is written without figures, and the section says so)."""
    stem = trace_stem(root, trace)
    lines = [f"### {stem}: {trace.kind} ({trace.attrs.get('program', '?')})", "", data_status_line(trace), ""]
    lines += [f"> **Warning:** {w}" for w in warnings_for(trace)] + [""]
    lines += ["#### Provenance", "", provenance_table(trace), ""]
    if "ranks" in trace.tables:
        lines += ["Rank placement (rank → node → core):", "", markdown_table(trace.tables["ranks"]), ""]
    if text_only:
        lines += [FIGURES_LEFT_OUT, ""]
    elif figures:
        lines += ["#### Figures", "", *_figure_lines(figures_for(trace), stem, out_dir)]
    else:
        lines += [f"Figures of this trace: `scaleprobe-analyze plot {trace.path.relative_to(root) if trace.path.is_relative_to(root) else trace.path}` "
                  "(per-trace figures are left out of reports of more than "
                  f"{AUTO_TRACE_FIGURES} traces; `report --trace-figures all` draws them).", ""]
    module = module_for(trace.kind)
    if module is not None:
        lines += module.report_tables(trace)
    lines += imbalance.report_lines(trace)
    return lines


def _header(scan: CampaignScan) -> list[str]:
    traces = scan.campaign.traces
    simulated = [trace_stem(scan.root, t) for t in traces if t.simulated]
    if simulated:
        status = (f"**{SIMULATED_LABEL} data present** in {len(simulated)} of {len(traces)} "
                  f"trace(s): {', '.join(simulated)}. Those numbers are not measurements.")
    else:
        status = f"**All {len(traces)} trace(s) hold measured data** (root attribute `simulated` = 0)."
    return ["# scaleprobe campaign report", "",
            f"Campaign `{scan.root.name}`: {len(traces)} valid trace(s) of {len(scan.points)} point(s).", "", status, ""]


def render(scan: CampaignScan, out_dir: Path, case: str = "best", trace_figures: str = "auto",
           figures: bool = True) -> str:
    """The report's markdown; its figures are written below ``out_dir/figures`` (none without ``figures``)."""
    traces = scan.campaign.traces
    per_trace_figures = draw_trace_figures(trace_figures, len(traces))
    parts = _header(scan) + status_lines(scan)
    for section in campaign_sections(traces, Options(case)):
        parts += section_lines(section, out_dir, figures)
    index = pd.DataFrame([(trace_stem(scan.root, t), t.kind, t.machine, t.nranks, status_text(t.simulated))
                          for t in traces], columns=["trace", "kind", "machine", "ranks", "data"])
    parts += ["## Per-trace details", "", markdown_table(index), ""]
    for trace in traces:
        parts += trace_section(scan.root, trace, out_dir, per_trace_figures, text_only=not figures)
    return "\n".join(parts).rstrip("\n") + "\n"


def write_report(scan: CampaignScan, out_dir: str | Path, case: str = "best", trace_figures: str = "auto",
                 figures: bool = True) -> Path:
    """Write ``report.md`` and its figures into ``out_dir`` (see the module docstring); return the report's path.

    ``case`` picks the train case the scaling sections use: 'best' or 'ALGORITHM/CAP';
    ``trace_figures`` whether the per-trace sections get figures (:func:`draw_trace_figures`);
    ``figures=False`` writes the text alone, saving no figure (quicker when only the status and
    the tables are wanted); every section then says its figures were left out.
    The ``figures`` folder is replaced whole, so no figure of an earlier report lingers.
    """
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}-", dir=out_dir.parent))
    try:
        text = render(scan, work, case, trace_figures, figures)
        (work / "report.md").write_text(text)
        out_dir.mkdir(exist_ok=True)
        (work / "figures").mkdir(exist_ok=True)
        if (out_dir / "figures").is_dir():
            os.replace(out_dir / "figures", work / "old-figures")
        os.replace(work / "figures", out_dir / "figures")
        os.replace(work / "report.md", out_dir / "report.md")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out_dir / "report.md"
