"""Campaigns, tolerantly: every expected run of a folder with its status, and the report's
"Campaign status" section (the discovery, points and passes are in ``campaign.py``).

**Two ways to load.** :func:`load_campaign` (``plot``, ``fit``, ``timeline``, ``compare``) stops at
the first bad file, as those commands always did. :func:`scan_campaign` (``report``) never stops
on one bad file: every expected run gets a status (:data:`STATUSES`) and the report goes on with
the valid traces; only a folder without any valid trace is an error.

**Expected runs and their status.** With ``manifest.tsv`` (``manifest.py``) the expected runs
are its (point, pass) submissions; a run is *complete* when one of its submissions left a valid
trace, else judged by the last submission: *unreadable* (its ``.h5`` fails validation; the
one-line reason is given), *failed* (a ``*.failed`` file exists or its job log has an ``error:``
line, the last of which is quoted), *incomplete* (a ``*.h5.partial`` file: still running, or
killed) or *missing* (nothing on disk). Valid traces the manifest does not name are complete runs
of their own points, and bad files it does not name are listed as well. Without a manifest the
expected runs are the files found. A point is complete when all its runs are, *partial* when
some are, else it has the status of its last run.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .campaign import STATUSES, TRACE_NAME, Campaign, Point, find_files, group_points, machine_identity, trace_stem
from .manifest import MANIFEST_NAME, ManifestError, Submission, job_error_line, locate, read_manifest
from .style import status_text
from .textfmt import markdown_table
from .trace import Trace, TraceError, load_traces

@dataclass(frozen=True)
class Run:
    """One expected run: a (point, pass) and what became of it."""

    point: str  # point name (manifest.point_name), or '?' for a file that says nothing about its point
    pass_no: str
    status: str
    path: Path | None
    reason: str = ""
    attempts: int = 1  # submissions of this (point, pass) in the manifest
    trace: Trace | None = None
    # Earlier submissions of a run that later completed, which failed: (job id, reason) each. Every
    # attempt is reported, not only the one that worked.
    failed_attempts: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CampaignScan:
    """What :func:`scan_campaign` found: the valid traces, every expected run, what was not read."""

    root: Path
    campaign: Campaign  # the valid traces
    points: list[Point]
    runs: list[Run]
    skipped: dict[str, int]
    manifest_note: str


def _unclaimed(path: Path, status: str, reason: str) -> Run:
    """A bad file no manifest row names: its point and pass from the file name where jobs/ named it."""
    match = TRACE_NAME.match(path.name)
    if match is None:
        return Run("?", "?", status, path, reason)
    return Run(match.group("point"), match.group("pass") or "1", status, path, reason)


def _real(path: Path | str) -> Path:
    """One spelling per file (absolute, symlinks resolved), so manifest paths and found files compare."""
    return Path(os.path.realpath(path))


def _failed_attempts(root: Path, subs: list[Submission], paths: list[Path],
                     loaded: dict[Path, Trace]) -> tuple[tuple[str, str], ...]:
    """The earlier submissions that left no valid trace and say why: an error line in their job log,
    or their trace moved aside as *.failed (a resume's row for a point already complete says neither)."""
    out = []
    for sub, path in zip(subs, paths):
        if path in loaded:
            continue
        error = job_error_line(locate(root, sub.log)) if sub.log else None
        moved = [f"{path.name}{sfx}" for sfx in (".failed", ".partial.failed") if Path(f"{path}{sfx}").exists()]
        if error or moved:
            out.append((sub.job_id, f'job log: "{error}"' if error else f"trace moved aside to {moved[0]}"))
    return tuple(out)


def _judge(root: Path, subs: list[Submission], loaded: dict[Path, Trace],
           problems: dict[Path, str]) -> tuple[Run, set[Path]]:
    """A (point, pass) of the manifest from its submissions (module docstring); also the files it accounts for.

    ``root`` and the keys of ``loaded`` and ``problems`` are :func:`_real` paths.
    """
    first = subs[0]
    paths = [_real(locate(root, s.trace)) for s in subs]
    claimed = {Path(f"{p}{sfx}") for p in paths for sfx in ("", ".partial", ".failed", ".partial.failed")}
    for k in range(len(paths) - 1, -1, -1):
        if paths[k] in loaded:
            return Run(first.point, str(first.pass_no), "complete", paths[k], "", len(subs), loaded[paths[k]],
                       _failed_attempts(root, subs[:k], paths[:k], loaded)), claimed
    path = paths[-1]
    # The job log of the last submission that ran (a resume's row for a point it found complete has none).
    last = next((s for s in reversed(subs) if s.log), subs[-1])
    error = job_error_line(locate(root, last.log)) if last.log else None
    moved = [Path(f"{path}{sfx}") for sfx in (".failed", ".partial.failed") if Path(f"{path}{sfx}").exists()]
    if path in problems:
        status, reason = "unreadable", problems[path]
    elif moved or error:
        status = "failed"
        reason = "; ".join([f'job log: "{error}"'] * bool(error) + [f"trace moved aside to {f.name}" for f in moved[:1]])
    elif Path(f"{path}.partial").exists():
        status, path = "incomplete", Path(f"{path}.partial")
        reason = "only the .partial file: the run is still writing it, or it died"
    else:
        log_note = "its job log has no error line" if last.log and locate(root, last.log).exists() else "no job log yet"
        status, reason = "missing", f"no trace ({log_note})"
    return Run(first.point, str(first.pass_no), status, path, reason, len(subs)), claimed


def scan_campaign(directory: str | Path) -> CampaignScan:
    """Every expected run of the folder with its status, and the valid traces (module docstring).

    Raises :class:`TraceError` only when the folder is missing or holds no valid trace.
    """
    root = Path(directory)
    if not root.is_dir():
        raise TraceError(root, "campaign directory not found")
    files = find_files(root)
    real_root = _real(root)
    loaded: dict[Path, Trace] = {}  # keyed by _real(path); the Trace keeps the path as found
    problems: dict[Path, str] = {}
    for path, result in zip(files.traces, load_traces(files.traces)):  # one isolated child for the older ones
        if isinstance(result, TraceError):
            problems[_real(path)] = result.problem
        else:
            loaded[_real(path)] = result
    points = group_points(list(loaded.values()))
    pass_of = {_real(t.path): label for p in points for t, label in zip(p.traces, p.passes)}
    name_of = {_real(t.path): p.id.name for p in points for t in p.traces}
    runs, claimed = [], set()
    note = f"No `{MANIFEST_NAME}`: the expected runs are the files found."
    manifest = root / MANIFEST_NAME
    if manifest.is_file():
        try:
            subs = read_manifest(manifest)
            by_run: dict[tuple, list[Submission]] = {}
            for s in subs:
                by_run.setdefault((s.point, s.pass_no), []).append(s)
            for group in by_run.values():
                run, files_of_run = _judge(real_root, group, loaded, problems)
                runs.append(run)
                claimed |= files_of_run
            note = (f"`{MANIFEST_NAME}`: {len(by_run)} run(s) of {len({k[0] for k in by_run})} point(s) submitted "
                    f"({len(subs)} submission(s)).")
        except ManifestError as exc:
            note = f"`{MANIFEST_NAME}` could not be read ({exc}): the expected runs are the files found."
    for path, trace in loaded.items():
        if path not in claimed:
            runs.append(Run(name_of[path], pass_of[path], "complete", path, "not in the manifest" if manifest.is_file()
                            else "", 1, trace))
    for path, reason in problems.items():
        if path not in claimed:
            runs.append(_unclaimed(path, "unreadable", reason))
    for path in map(_real, files.partials):
        if path not in claimed:
            runs.append(_unclaimed(path, "incomplete", "only the .partial file: the run is still writing it, or it died"))
    for path in map(_real, files.failed):
        if path not in claimed:
            runs.append(_unclaimed(path, "failed", "moved aside as *.failed by its job"))
    if not loaded:
        bad = [r for r in runs if r.status != "complete"]
        if len(bad) == 1 and bad[0].path is not None:
            raise TraceError(bad[0].path, bad[0].reason or bad[0].status)
        counts = ", ".join(f"{sum(r.status == s for r in runs)} {s}" for s in STATUSES if any(r.status == s for r in runs))
        raise TraceError(root, f"no valid trace in the campaign directory ({counts or 'no *.h5 files'})")
    return CampaignScan(root, Campaign(root, sorted(loaded.values(), key=lambda t: t.path)), points, runs,
                        files.skipped, note)


def relative_path(path: Path | None, root: Path) -> str:
    return "" if path is None else os.path.relpath(path, _real(root))


def _point_status(runs: list[Run]) -> str:
    if all(r.status == "complete" for r in runs):
        return "complete"
    if any(r.status == "complete" for r in runs):
        return "partial"
    return runs[-1].status


def _natural(text: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def status_lines(scan: CampaignScan) -> list[str]:
    """The '## Campaign status' section: counts, runs without a valid trace, points, machines."""
    by_point: dict[str, list[Run]] = {}
    for run in scan.runs:
        by_point.setdefault(run.point, []).append(run)
    names = sorted(by_point, key=_natural)
    point_status = {n: _point_status(by_point[n]) for n in names}
    counts = pd.DataFrame([{"status": s, "points": sum(v == s for v in point_status.values()),
                            "runs": sum(r.status == s for r in scan.runs)} for s in STATUSES])
    counts = pd.concat([pd.DataFrame([{"status": "expected", "points": len(names), "runs": len(scan.runs)}]), counts])
    lines = ["## Campaign status", "", scan.manifest_note, "", markdown_table(counts), ""]
    if scan.skipped:
        lines += ["Not read (not traces): " + ", ".join(f"`{d}` ({n} file{'s' if n != 1 else ''})"
                                                        for d, n in scan.skipped.items()) + ".", ""]
    bad = sorted((r for r in scan.runs if r.status != "complete"), key=lambda r: (_natural(r.point), _natural(r.pass_no)))
    if bad:
        table = pd.DataFrame([{"point": r.point, "pass": r.pass_no, "status": r.status,
                               "file": relative_path(r.path, scan.root),
                               "reason": r.reason} for r in bad])
        lines += [f"Runs without a valid trace ({len(bad)}); the report goes on with the "
                  f"{len(scan.campaign.traces)} valid trace(s):", "", markdown_table(table), ""]
    retried = sorted((r for r in scan.runs if r.failed_attempts), key=lambda r: (_natural(r.point), _natural(r.pass_no)))
    if retried:
        table = pd.DataFrame([{"point": r.point, "pass": r.pass_no, "failed job": job, "reason": why}
                              for r in retried for job, why in r.failed_attempts])
        lines += [f"Failed attempts of runs that later completed ({len(table)} attempt(s) of {len(retried)} run(s); "
                  "the campaign's resume submitted them again):", "", markdown_table(table), ""]
    machines: dict[tuple, str] = {}
    for t in scan.campaign.traces:
        machines.setdefault(machine_identity(t), f"M{len(machines) + 1}")
    rows = []
    for name in names:
        runs = by_point[name]
        traces = [r.trace for r in runs if r.trace is not None]
        ok = sorted((r.pass_no for r in runs if r.status == "complete"), key=_natural)
        rows.append({"point": name, "status": point_status[name], "runs": len(runs), "complete": len(ok),
                     "passes": ", ".join(ok), "ranks": ", ".join(sorted({str(t.nranks) for t in traces})),
                     "nodes": ", ".join(sorted({str(len(t.nodes)) for t in traces})),
                     "machine": ", ".join(sorted({machines[machine_identity(t)] for t in traces})),
                     "data": ", ".join(sorted({status_text(t.simulated) for t in traces}))})
    lines += ["Points (passes: the pass numbers with a valid trace; nodes: distinct `node` values of the ranks):", "",
              markdown_table(pd.DataFrame(rows)), ""]
    if machines:
        keys = sorted({k for ident in machines for k, _ in ident})
        table = pd.DataFrame({"key": keys, **{m: [dict(ident).get(k, "") for k in keys] for ident, m in machines.items()}})
        lines += ["Machines (the `cpu_*`, cache and memory keys of `/provenance`):", "", markdown_table(table), ""]
    envs: dict[tuple, list[str]] = {}
    for t in scan.campaign.traces:
        envs.setdefault(tuple(t.launch_kernel_env.items()), []).append(trace_stem(scan.root, t))
    if len(envs) > 1:
        lines += [f"> **Warning:** the traces were launched under {len(envs)} different kernel-relevant "
                  "environments (OMP_*, OPENBLAS_*, MKL_*, KMP_*, GOMP_*, ONEDNN_*/DNNL_* variables; not counting "
                  "the OpenBLAS core a trainer chose itself, its `blas_core`), so their kernels may differ:", ""]
        rows = [{"environment": " ".join(f"{k}={v}" for k, v in env) or "(none set)", "traces": len(stems),
                 "e.g.": stems[0]} for env, stems in sorted(envs.items())]
        lines += [markdown_table(pd.DataFrame(rows)), ""]
    return lines


def scan_of(campaign: Campaign) -> CampaignScan:
    """A strictly loaded campaign (e.g. one trace file) as a scan: every trace a complete run, nothing skipped."""
    points = group_points(campaign.traces)
    runs = [Run(p.id.name, label, "complete", t.path, "", 1, t) for p in points for t, label in zip(p.traces, p.passes)]
    return CampaignScan(campaign.root, campaign, points, runs, {}, "The expected runs are the traces given.")
