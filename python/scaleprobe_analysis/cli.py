"""Command line: ``scaleprobe-analyze {check,fit,plot,report,export,timeline,compare} ...``.

Every refusal of a bad trace is reported as the single line
``scaleprobe-analyze: error: <file>: <problem>`` on stderr with exit status 1; usage errors
exit with status 2 (argparse's convention). ``report`` on a folder never stops on one bad file
(``campaign_status.scan_campaign``: bad and missing runs are listed in the report); it fails only when
no valid trace is left. Every other command, and ``report`` given one file, refuses a bad file.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import allreduce
from .alphabeta import fit_summary
from .calibrate import CalibrationError, calibrate
from .campaign import Campaign, load_campaign, trace_stem
from .campaign_status import scan_campaign, scan_of
from .export import export
from .compare import IMPROVEMENT, REGRESSION, STATS, compare_campaigns, render
from .kinds import module_for
from .plots import plot_campaign
from .report import AUTO_TRACE_FIGURES, TRACE_FIGURES, write_report
from .style import status_text
from .timeline import CLOCK_NOTE, DEFAULT_MAX_EVENTS, write_timeline
from .trace import TraceError, load_trace, load_traces
from .upgrade import upgrade_files

PROG = "scaleprobe-analyze"


def _error(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)


def _is_file(path: str) -> bool:
    p = Path(path)
    return p.is_file() or p.name.endswith((".h5", ".partial"))


def _campaign(path: str) -> Campaign:
    """A directory is a campaign (loaded strictly); a single file is a campaign of one trace."""
    p = Path(path)
    if _is_file(path):
        return Campaign(root=p.parent, traces=[load_trace(p)])
    return load_campaign(p)


def cmd_check(args) -> int:
    bad = 0
    for name, t in zip(args.files, load_traces(args.files)):  # older files: one isolated child for all
        if isinstance(t, TraceError):
            _error(str(t))
            bad += 1
            continue
        tables = " ".join(f"{k}={len(v)}" for k, v in t.tables.items())
        print(f"ok: {name} kind={t.kind} ranks={t.nranks} data={status_text(t.simulated)} tables: {tables}")
    return 1 if bad else 0


def cmd_upgrade(args) -> int:
    return upgrade_files(args.files, sys.stdout, sys.stderr)


def cmd_fit(args) -> int:
    campaign = _campaign(args.campaign)
    traces = campaign.of_kind(allreduce.KIND)
    if not traces:
        _error(f"{args.campaign}: no allreduce traces to fit")
        return 1
    for t in traces:
        print(f"# {trace_stem(campaign.root, t)}: {t.machine}, {t.nranks} ranks, {status_text(t.simulated)}, "
              f"t = alpha + beta*n fitted to {args.stat}")
        print(f"{'series':<20} {'alpha_us':>10} {'beta_us_per_B':>14} {'1/beta_GBps':>12} {'rms_rel_err':>12} {'points':>6}")
        for row in fit_summary(t.table("summary"), args.stat).itertuples():
            print(f"{row.series:<20} {row.alpha_us:>10.4g} {row.beta_us_per_byte:>14.4g} "
                  f"{row.bandwidth_GBps:>12.4g} {row.rms_rel_error:>12.3g} {row.points:>6d}")
    return 0


def cmd_calibrate(args) -> int:
    measured = _campaign(args.measured).of_kind(allreduce.KIND)
    simulated = load_trace(Path(args.simulated))
    try:
        c = calibrate(measured, simulated, args.algorithm, args.stat)
    except CalibrationError as e:
        _error(f"calibrate: {e}")
        return 1
    m, s = c.measured, c.simulated
    machines = sorted({t.machine for t in measured})
    print(f"# measured ({len(measured)} trace(s), {', '.join(machines)}, {simulated.nranks} ranks, {args.algorithm}, "
          f"{args.stat}): alpha {m.alpha_us:.4g} us, 1/beta {m.bandwidth_GBps:.4g} GB/s, rms rel. error {m.rms_rel_error:.3g}")
    print(f"# simulated on the reference {c.link} link ({c.reference_latency_s * 1e6:.4g} us, "
          f"{c.reference_bandwidth_Bps / 1e9:.4g} GB/s): alpha {s.alpha_us:.4g} us, 1/beta {s.bandwidth_GBps:.4g} GB/s")
    print(f"# calibrated {c.link} link: {c.latency_s * 1e6:.4g} us, {c.bandwidth_Bps / 1e9:.4g} GB/s "
          f"(the {args.algorithm} at {simulated.nranks} ranks, its reductions and copies included)")
    print(c.flags())
    return 0


def cmd_plot(args) -> int:
    campaign = _campaign(args.campaign)
    out = Path(args.output) if args.output else campaign.root / "figures"
    for paths in plot_campaign(campaign, out, args.case).values():
        for p in paths:
            print(p)
    return 0


def cmd_report(args) -> int:
    scan = scan_of(_campaign(args.campaign)) if _is_file(args.campaign) else scan_campaign(args.campaign)
    out = Path(args.output) if args.output else scan.root / "report"
    print(write_report(scan, out, args.case, args.trace_figures))
    return 0


def cmd_export(args) -> int:
    if args.format == "csv" and not args.output:
        _error("export --format csv needs -o DIR (one CSV file per table)")
        return 2
    scan = scan_of(_campaign(args.campaign)) if _is_file(args.campaign) else scan_campaign(args.campaign)
    if not scan.campaign.traces:
        _error(f"{args.campaign}: no valid trace to export")
        return 1
    for path in export(scan, args.format, Path(args.output) if args.output else None):
        print(path)
    return 0


def cmd_timeline(args) -> int:
    campaigns = [_campaign(p) for p in args.traces]
    traces = [t for c in campaigns for t in c.traces]
    labels = [trace_stem(c.root, t) for c in campaigns for t in c.traces]
    for note in write_timeline(traces, args.output, args.max_events, labels):
        print(f"{PROG}: note: {note}", file=sys.stderr)
    notes = sorted({m.timeline_note(t) if hasattr(m, "timeline_note") else m.TIMELINE_NOTE
                    for t in traces if (m := module_for(t.kind)) is not None and m.TIMELINE_NOTE})
    tracks = "one track per rank" + (f" ({'; '.join(notes)})" if notes else "")
    print(f"{args.output}: {len(traces)} trace(s), {tracks}; open in https://ui.perfetto.dev "
          f"or chrome://tracing ({CLOCK_NOTE})")
    return 0


def cmd_compare(args) -> int:
    comparison = compare_campaigns(_campaign(args.base), _campaign(args.new), args.stat, args.threshold,
                                   args.allow_env_difference)
    if not comparison.pairs:
        _error(f"{args.base} and {args.new}: no pair of allreduce or bucket_sweep traces of the same kind to compare")
        return 1
    print(render(comparison), end="")
    regressions = comparison.count(REGRESSION)
    if args.fail_on_regression and regressions:
        print(f"{PROG}: {regressions} regression(s) beyond {args.threshold:.1%} "
              f"({comparison.count(IMPROVEMENT)} improvement(s))", file=sys.stderr)
        return 1
    return 0


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value < 10:
        raise argparse.ArgumentTypeError(f"a relative change such as 0.05 (5 %), got {text}")
    return value


def _case_choice(text: str) -> str:
    if text != "best" and (text.count("/") != 1 or not all(text.split("/"))):
        raise argparse.ArgumentTypeError(f"'best' or ALGORITHM/CAP such as ring/25 or mpi/tensor, got {text!r}")
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Analyse scaleprobe HDF5 traces.")
    version = sys.modules[__package__].__version__  # the package's own (__init__.py)
    parser.add_argument("--version", action="version",
                        version=f"{PROG} (scaleprobe {version}) Python {sys.version.split()[0]}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("check", help="validate trace files (one line each; exit 1 if any is bad)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("upgrade", help="re-write files without a whole-file digest in the digested format, after a "
                                       "full isolated read; each is read back identical before it replaces the "
                                       "original (one line each; exit 1 if any was left as it was)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(func=cmd_upgrade)
    p = sub.add_parser("fit", help="print the alpha-beta fit per algorithm of every allreduce trace")
    p.add_argument("campaign", metavar="DIR", help="campaign directory (or one trace file)")
    p.add_argument("--stat", default="t_mean_us", choices=["t_mean_us", "p50_us", "t_min_us"],
                   help="summary time column to fit (default t_mean_us)")
    p.set_defaults(func=cmd_fit)
    p = sub.add_parser("calibrate", help="a simulated platform's link (scripts/simulate's options) from measured "
                                         "allreduce traces and one simulation of the same algorithm on a reference link")
    p.add_argument("measured", metavar="DIR", help="measured allreduce traces: a campaign directory or one file")
    p.add_argument("simulated", metavar="SIMULATED", help="the same algorithm and ranks through scripts/simulate")
    p.add_argument("--algorithm", default="ring", help="the algorithm to calibrate with (default ring)")
    p.add_argument("--stat", default="p50_us", choices=["t_mean_us", "p50_us", "t_min_us"],
                   help="summary time column (default p50_us; the median over traces per size is fitted)")
    p.set_defaults(func=cmd_calibrate)
    for name, default, what in (("plot", "figures", "write PNG and SVG figures (latency, bandwidth, bucket cap, contention, "
                                                    "per-rank imbalance; trainer breakdown, overlap and strong/weak scaling)"),
                                ("report", "report", "write report.md with figures and tables (incl. per-rank imbalance "
                                                     "and trainer scaling)")):
        p = sub.add_parser(name, help=what)
        p.add_argument("campaign", metavar="DIR", help="campaign directory (or one trace file)")
        p.add_argument("-o", "--output", metavar="OUT", help=f"output directory (default DIR/{default})")
        p.add_argument("--case", default="best", type=_case_choice, metavar="best|ALGORITHM/CAP",
                       help="train traces: the case (gradient allreduce algorithm and bucket cap, e.g. ring/25) "
                            "whose time per iteration the scaling figures use (default best: each trace's fastest)")
        if name == "report":
            p.add_argument("--trace-figures", choices=TRACE_FIGURES, default="auto",
                           help=f"figures in the per-trace sections: all, none, or auto (only for campaigns of at most "
                                f"{AUTO_TRACE_FIGURES} traces; default)")
        p.set_defaults(func=cmd_plot if name == "plot" else cmd_report)
    p = sub.add_parser(
        "timeline", help="export samples as Chrome trace-event JSON (Perfetto, chrome://tracing)",
        description="One process per trace, one track per rank, one complete event per sample (bucket "
                    "allreduces nested in their iteration; train traces: a main-thread track with the step phases and "
                    "a communication-thread track with each bucket's allreduce, its ready instant and a flow arrow "
                    "from backward, per rank). Sample start times are per-rank clocks, never "
                    "comparable across ranks: every rank's track is shifted so its first sample starts at 0; "
                    "compare positions within a track only.")
    p.add_argument("traces", nargs="+", metavar="TRACE", help="trace file(s) or campaign directories")
    p.add_argument("-o", "--output", required=True, metavar="OUT.json", help="JSON file to write")
    p.add_argument("--max-events", type=_positive_int, default=DEFAULT_MAX_EVENTS, metavar="N",
                   help=f"write at most N events in all, shared equally among the traces (default "
                        f"{DEFAULT_MAX_EVENTS}); whole iterations are kept, iteration 0 of every case "
                        f"first, and what was dropped is printed")
    p.set_defaults(func=cmd_timeline)
    p = sub.add_parser("export", help="a campaign's per-case summary tables as CSV or JSON",
                       description="Every valid trace's per-case table (allreduce and bucket_sweep: summary; train: "
                                   "cases), each row prefixed with its run (trace, point, pass, nodes, tasks per node, "
                                   "cpus per task, ranks, scaling, launcher, CPU, measured or simulated), and the "
                                   "campaign status (every expected run). Values unrounded. Schema: docs/trace-schema.md.")
    p.add_argument("campaign", metavar="DIR", help="campaign directory (or one trace file)")
    p.add_argument("--format", choices=("csv", "json"), default="json", help="default json")
    p.add_argument("-o", "--output", metavar="OUT",
                   help="json: the file (default standard output); csv: a directory, one <table>.csv per table")
    p.set_defaults(func=cmd_export)
    p = sub.add_parser(
        "compare", help="compare two campaigns or traces row by row (regression / improvement / within noise)",
        description="Match summary rows (allreduce: algorithm, dtype, op, placement, bytes; bucket_sweep: "
                    "layout, algorithm, cap) and print base vs new as a markdown table. A row is a "
                    "regression (improvement) when it changed by more than the threshold and a bootstrap "
                    "95% interval of the ratio of per-iteration medians (slowest rank per iteration) excludes 1; "
                    "otherwise it is within noise. The interval reflects the spread within each run only: "
                    "run-to-run variation on a shared machine can be larger, so set the threshold from repeated "
                    "runs. Exit status 1 with --fail-on-regression when any row regressed.")
    p.add_argument("base", metavar="BASE", help="campaign directory or trace file")
    p.add_argument("new", metavar="NEW", help="campaign directory or trace file")
    p.add_argument("--threshold", type=_fraction, default=0.05, metavar="FRACTION",
                   help="smallest relative change reported as a regression or improvement (default 0.05)")
    p.add_argument("--stat", default="t_mean_us", choices=STATS, help="summary column compared (default t_mean_us)")
    p.add_argument("--fail-on-regression", action="store_true", help="exit 1 if any row is a regression")
    p.add_argument("--allow-env-difference", action="store_true",
                   help="compare even when the two sides ran under different kernel-relevant environments "
                        "(OMP_*, OPENBLAS_*, MKL_*, KMP_*, GOMP_*, ONEDNN_*/DNNL_*); refused by default")
    p.set_defaults(func=cmd_compare)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except TraceError as exc:
        _error(str(exc))
        return 1
    except OSError as exc:  # an output the system refused (-o in a missing folder, under a file, read-only)
        output = getattr(args, "output", None) or exc.filename
        _error(f"cannot write {output}: {exc.strerror}" if output else str(exc))
        return 1
