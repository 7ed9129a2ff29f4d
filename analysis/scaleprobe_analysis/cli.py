"""Command line: ``scaleprobe-analyze {check,fit,plot,report} ...``.

Every refusal of a bad trace is reported as the single line
``scaleprobe-analyze: error: <file>: <problem>`` on stderr with exit status 1; usage errors
exit with status 2 (argparse's convention).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .alphabeta import fit_summary
from .plots import data_status, plot_campaign, trace_stem
from .report import write_report
from .trace import Campaign, TraceError, load_campaign, load_trace

PROG = "scaleprobe-analyze"


def _error(message: str) -> None:
    print(f"{PROG}: error: {message}", file=sys.stderr)


def _campaign(path: str) -> Campaign:
    """A directory is a campaign; a single file is a campaign of one trace."""
    p = Path(path)
    if p.is_file() or p.name.endswith((".h5", ".partial")):
        return Campaign(root=p.parent, traces=[load_trace(p)])
    return load_campaign(p)


def cmd_check(args) -> int:
    bad = 0
    for name in args.files:
        try:
            t = load_trace(name)
        except TraceError as exc:
            _error(str(exc))
            bad += 1
            continue
        tables = " ".join(f"{k}={len(v)}" for k, v in t.tables.items())
        print(f"ok: {name} kind={t.kind} ranks={t.nranks} data={data_status(t)} tables: {tables}")
    return 1 if bad else 0


def cmd_fit(args) -> int:
    campaign = _campaign(args.campaign)
    traces = campaign.of_kind("allreduce")
    if not traces:
        _error(f"{args.campaign}: no allreduce traces to fit")
        return 1
    for t in traces:
        print(f"# {trace_stem(campaign, t)}: {t.machine}, {t.nranks} ranks, {data_status(t)}, "
              f"t = alpha + beta*n fitted to {args.stat}")
        print(f"{'series':<20} {'alpha_us':>10} {'beta_us_per_B':>14} {'1/beta_GBps':>12} {'rms_rel_err':>12} {'points':>6}")
        for row in fit_summary(t.table("summary"), args.stat).itertuples():
            print(f"{row.series:<20} {row.alpha_us:>10.4g} {row.beta_us_per_byte:>14.4g} "
                  f"{row.bandwidth_GBps:>12.4g} {row.rms_rel_error:>12.3g} {row.points:>6d}")
    return 0


def cmd_plot(args) -> int:
    campaign = _campaign(args.campaign)
    out = Path(args.output) if args.output else campaign.root / "figures"
    for paths in plot_campaign(campaign, out).values():
        for p in paths:
            print(p)
    return 0


def cmd_report(args) -> int:
    campaign = _campaign(args.campaign)
    out = Path(args.output) if args.output else campaign.root / "report"
    print(write_report(campaign, out))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Analyse scaleprobe HDF5 traces.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("check", help="validate trace files (one line each; exit 1 if any is bad)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("fit", help="print the alpha-beta fit per algorithm of every allreduce trace")
    p.add_argument("campaign", metavar="DIR", help="campaign directory (or one trace file)")
    p.add_argument("--stat", default="t_mean_us", choices=["t_mean_us", "p50_us", "t_min_us"],
                   help="summary time column to fit (default t_mean_us)")
    p.set_defaults(func=cmd_fit)
    for name, default, what in (("plot", "figures", "write PNG and SVG figures"),
                                ("report", "report", "write report.md with figures and tables")):
        p = sub.add_parser(name, help=what)
        p.add_argument("campaign", metavar="DIR", help="campaign directory (or one trace file)")
        p.add_argument("-o", "--output", metavar="OUT", help=f"output directory (default DIR/{default})")
        p.set_defaults(func=cmd_plot if name == "plot" else cmd_report)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except TraceError as exc:
        _error(str(exc))
        return 1
