"""Campaigns: a folder of traces, what was expected of it, and the points it measured.

**Discovery.** Trace candidates are the ``*.h5`` files below the folder, except in folders named
``checkpoints``, ``segments``, ``layouts``, ``logs`` or ``report`` (at any depth) and hidden
folders: they hold trainer checkpoints (HDF5, but not traces), interrupted trainer segments,
weak-scaling layout files, job logs and reports. Their files are counted, never read.

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

**Point identity** comes from the trace itself, so hand-made runs group too (:func:`point_of`):
kind and benchmark (program), **nodes** = distinct values of the ``ranks`` table's ``node``
column (SLURMD_NODENAME, else the host; older traces: ``host``), **tasks per node** = nranks /
nodes, **cpus per task** = the largest ``ranks.omp_threads``, **scaling** = root attribute
``scaling`` (absent: strong), **launcher** = ``/provenance/env`` ``SCALEPROBE_LAUNCHER`` (absent:
unknown), and the **configuration**: the command line with the program's directory, the trace
and checkpoint paths (``-o/--trace``, ``--save``, ``--resume``) and ``-q/-v`` taken out, so two
sweeps with different arguments in one folder are never mixed. Traces of one point are its
**passes**, numbered by ``/provenance/env`` ``SCALEPROBE_PASS`` when every one has it, else 1, 2,
... by ``start_time_utc`` (then path).

**Combining passes** (:func:`combine_passes`): per case, the **median** over passes (numpy's
median: the mean of the two middle values for an even count), the **min** and **max** (drawn
as error bars), ``passes`` (how many) and the pass-to-pass **spread** = (max − min) / median.

**Machine identity** (:func:`machine_identity`): the ``cpu_*`` and cache keys of
``/provenance`` (``cpu_flags`` as a count and a short hash); ``rank_cache_share_bytes`` is left
out since it changes with the ranks per node, not the machine.
"""
from __future__ import annotations

import hashlib
import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .manifest import MANIFEST_NAME, ManifestError, Submission, job_error_line, locate, point_name, read_manifest
from .style import status_text
from .textfmt import file_stem, markdown_table
from .trace import Trace, TraceError, load_trace

NON_TRACE_DIRS = ("checkpoints", "segments", "layouts", "logs", "report")
STATUSES = ("complete", "partial", "failed", "missing", "incomplete", "unreadable")
BENCH_OF_PROGRAM = {"allreduce_perf": "allreduce"}  # the job scripts' name where it differs from the binary's
PER_LAYOUT_KEYS = ("rank_cache_share_bytes",)
DROPPED_WITH_VALUE = ("-o", "--trace", "--save", "--resume")  # paths that differ from run to run
DROPPED_FLAGS = ("-q", "--quiet", "-v", "--verbose")
# How jobs/ names a trace: <point>[_p<pass, from 2>]_j<job id>.h5 (then .partial, .failed, ...)
TRACE_NAME = re.compile(r"^(?P<point>.+?)(_p(?P<pass>[0-9]+))?_j[0-9_]+\.h5(\..*)?$")


# --- discovery and strict loading -------------------------------------------------------------

@dataclass(frozen=True)
class Campaign:
    """Every trace found under one directory, in sorted path order."""

    root: Path
    traces: list[Trace] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[Trace]:
        return [t for t in self.traces if t.kind == kind]


@dataclass(frozen=True)
class Files:
    """What a campaign folder holds: trace candidates, leftovers of bad runs, and what was not read."""

    traces: list[Path]
    partials: list[Path]  # *.h5.partial
    failed: list[Path]  # *.failed
    skipped: dict[str, int]  # non-trace folder name → files in it (not read)


def find_files(root: Path) -> Files:
    """Walk ``root`` in sorted order, skipping (and counting) the non-trace folders."""
    traces, partials, failed, skipped = [], [], [], {}
    for directory, dirs, names in os.walk(root):
        keep = []
        for d in sorted(dirs):
            if d in NON_TRACE_DIRS or d.startswith("."):
                count = sum(len(files) for _, _, files in os.walk(Path(directory) / d))
                skipped[d + "/"] = skipped.get(d + "/", 0) + count
            else:
                keep.append(d)
        dirs[:] = keep
        for name in sorted(names):
            path = Path(directory) / name
            if name.endswith(".h5"):
                traces.append(path)
            elif name.endswith(".h5.partial"):
                partials.append(path)
            elif name.endswith(".failed"):
                failed.append(path)
    return Files(sorted(traces), sorted(partials), sorted(failed), dict(sorted(skipped.items())))


def load_campaign(directory: str | Path) -> Campaign:
    """Load every trace under ``directory``; the first bad file (or ``*.h5.partial``) raises :class:`TraceError`."""
    root = Path(directory)
    if not root.is_dir():
        raise TraceError(root, "campaign directory not found")
    files = find_files(root)
    if files.partials:
        raise TraceError(files.partials[0], "incomplete trace (a run still writing it, or one that died)")
    if not files.traces:
        raise TraceError(root, "no *.h5 traces in the campaign directory")
    return Campaign(root=root, traces=[load_trace(p) for p in files.traces])


def trace_stem(root: Path, trace: Trace) -> str:
    """File-name-safe label unique within the campaign: the path below its root, without .h5."""
    rel = trace.path.relative_to(root) if trace.path.is_relative_to(root) else Path(trace.path.name)
    text = str(rel)[: -len(".h5")] if str(rel).endswith(".h5") else str(rel)
    return file_stem(text)


# --- point identity, passes, combining ---------------------------------------------------------

@dataclass(frozen=True, order=True)
class PointId:
    """What one run measured (see the module docstring); sorts as the tables list points."""

    kind: str
    bench: str
    config: str
    scaling: str
    launcher: str
    ranks: int
    nodes: int
    tasks_per_node: float
    cpus_per_task: int

    @property
    def sweep(self) -> tuple:
        """Points that differ only in nodes × tasks per node × cpus per task form one sweep."""
        return (self.kind, self.bench, self.config, self.scaling, self.launcher)

    @property
    def layout(self) -> str:
        """'2×4×1': nodes × tasks per node × cpus per task."""
        return f"{self.nodes}×{self.tasks_per_node:g}×{self.cpus_per_task}"

    @property
    def name(self) -> str:
        """The job scripts' point name, e.g. allreduce_N2_t4_c1 (what the status section lists)."""
        return point_name(self.bench, self.nodes, f"{self.tasks_per_node:g}", self.cpus_per_task,
                          scaling=self.scaling, launcher=self.launcher)


@dataclass(frozen=True)
class Point:
    """The passes of one point: its traces in pass order and their pass labels."""

    id: PointId
    traces: tuple[Trace, ...]
    passes: tuple[str, ...]

    @property
    def simulated(self) -> bool:
        return any(t.simulated for t in self.traces)


def benchmark_config(trace: Trace) -> str:
    """The command line without what changes from run to run of one configuration (module docstring)."""
    try:
        argv = shlex.split(str(trace.provenance.get("command_line", "")))
    except ValueError:
        argv = str(trace.provenance.get("command_line", "")).split()
    if not argv:
        return ""
    out, skip = [Path(argv[0]).name], False
    for arg in argv[1:]:
        if skip:  # the value of a dropped option
            skip = False
        elif arg in DROPPED_WITH_VALUE:
            skip = True
        elif not _run_specific(arg):
            out.append(arg)
    return shlex.join(out)


def _run_specific(arg: str) -> bool:
    """-q/-v, or a dropped option and its value in one word: --trace=X, --save=X, --resume=X, -oX."""
    return (arg in DROPPED_FLAGS or ("=" in arg and arg.split("=", 1)[0] in DROPPED_WITH_VALUE)
            or (arg.startswith("-o") and not arg.startswith("--")))


def point_of(trace: Trace) -> PointId:
    """The point a trace measured (module docstring)."""
    nodes = len(trace.nodes)
    ranks = trace.nranks
    tpn = ranks // nodes if ranks % nodes == 0 else round(ranks / nodes, 3)
    threads = trace.tables.get("ranks", pd.DataFrame())
    if "omp_threads" in threads and len(threads):
        cpt = int(threads["omp_threads"].max())
    else:
        cpt = int(trace.attrs.get("omp_threads", trace.provenance.get("omp_max_threads", 1)) or 1)
    program = str(trace.attrs.get("program", trace.provenance.get("program", trace.kind)))
    return PointId(kind=trace.kind, bench=BENCH_OF_PROGRAM.get(program, program), config=benchmark_config(trace),
                   scaling=str(trace.attrs.get("scaling", "strong")),
                   launcher=str(trace.env.get("SCALEPROBE_LAUNCHER", "unknown")),
                   ranks=ranks, nodes=nodes, tasks_per_node=tpn, cpus_per_task=cpt)


def _in_pass_order(traces: list[Trace]) -> tuple[list[Trace], list[str]]:
    numbers = [str(t.env.get("SCALEPROBE_PASS", "")) for t in traces]
    start = {id(t): (str(t.provenance.get("start_time_utc", "")), str(t.path)) for t in traces}
    if all(n.isdigit() for n in numbers):
        order = sorted(zip(traces, numbers), key=lambda tn: (int(tn[1]), start[id(tn[0])]))
        return [t for t, _ in order], [n for _, n in order]
    order = sorted(traces, key=lambda t: start[id(t)])
    return order, [str(k) for k in range(1, len(order) + 1)]


def group_points(traces: list[Trace]) -> list[Point]:
    """The traces grouped into points (sorted), each with its passes in order."""
    by_id: dict[PointId, list[Trace]] = {}
    for t in traces:
        by_id.setdefault(point_of(t), []).append(t)
    points = []
    for pid in sorted(by_id):
        ordered, labels = _in_pass_order(by_id[pid])
        points.append(Point(pid, tuple(ordered), tuple(labels)))
    return points


def sweeps(points: list[Point]) -> list[list[Point]]:
    """Points grouped by :attr:`PointId.sweep`, in sorted order (a sweep's points by ranks, nodes)."""
    groups: dict[tuple, list[Point]] = {}
    for p in points:
        groups.setdefault(p.id.sweep, []).append(p)
    return [groups[k] for k in sorted(groups)]


def cross_point_sweeps(points: list[Point]) -> list[list[Point]]:
    """The sweeps worth a cross-point section: two or more points, or one point with two or more passes
    (a single trace's own section says all there is)."""
    return [sweep for sweep in sweeps(points) if len(sweep) > 1 or len(sweep[0].traces) > 1]


def combine_passes(frames: list[pd.DataFrame], keys: list[str], values: list[str]) -> pd.DataFrame:
    """Per key: for each value column v, ``v`` = median over the frames (passes), ``v_min``, ``v_max``,
    ``v_spread`` = (max − min) / median; ``passes`` = frames with that key. Sorted by the keys."""
    data = pd.concat([f[keys + values] for f in frames], ignore_index=True)
    g = data.groupby(keys, sort=True, dropna=False)
    out = g.size().rename("passes").to_frame()
    for v in values:
        out[v] = g[v].median()
        out[f"{v}_min"] = g[v].min()
        out[f"{v}_max"] = g[v].max()
        out[f"{v}_spread"] = (out[f"{v}_max"] - out[f"{v}_min"]) / out[v]
    return out.reset_index()


def combine_points(points: list[Point], per_pass: Callable[[Trace], pd.DataFrame], keys: list[str],
                   values: list[str]) -> pd.DataFrame:
    """:func:`combine_passes` of every point, one frame: point columns (point, nodes, tasks_per_node,
    cpus_per_task, ranks) first. ``per_pass(trace)`` gives a pass's rows (``keys`` + ``values``)."""
    parts = []
    for p in points:
        combined = combine_passes([per_pass(t) for t in p.traces], keys, values)
        combined.insert(0, "point", p.id.layout)
        for k, col in enumerate(("nodes", "tasks_per_node", "cpus_per_task", "ranks")):
            combined.insert(1 + k, col, getattr(p.id, col))
        parts.append(combined)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def spread_table(combined: pd.DataFrame, value: str, case_label: pd.Series) -> pd.DataFrame:
    """Per point: passes, cases, median and largest pass-to-pass spread of ``value`` (%), and the case with the largest."""
    rows = []
    data = combined.assign(case=case_label.to_numpy())
    for point, part in data.groupby("point", sort=False):
        spread = (part[f"{value}_spread"] * 100).where(part["passes"] > 1)  # one pass: no spread to speak of
        worst = part.loc[spread.idxmax()] if spread.notna().any() else None
        rows.append({"point": point, "ranks": int(part["ranks"].iloc[0]), "passes": int(part["passes"].max()),
                     "cases": len(part), "median_spread_pct": float(spread.dropna().median()) if worst is not None
                     else float("nan"), "max_spread_pct": float(spread.max()),
                     "largest_in": "" if worst is None else worst["case"]})
    return pd.DataFrame(rows)


def layout_families(points: list[Point]) -> dict[tuple, str]:
    """(tasks per node, cpus per task) → series label ('4/node', or '4/node ×2 cpu' when cpus vary)."""
    cpts = {p.id.cpus_per_task for p in points}
    fams = sorted({(p.id.tasks_per_node, p.id.cpus_per_task) for p in points})
    return {(t, c): f"{t:g}/node" + (f" ×{c} cpu" if len(cpts) > 1 else "") for t, c in fams}


def data_note(traces: list[Trace]) -> list[str]:
    """A bold line above a cross-point section's tables when any of its traces is not measured data."""
    simulated = [t.path.name for t in traces if t.simulated]
    if not simulated:
        return []
    return [f"**{status_text(True)} data** in {len(simulated)} of {len(traces)} trace(s) of this section "
            f"({', '.join(simulated)}): the numbers below that use them are not measurements.", ""]


def points_caption(points: list[Point]) -> str:
    """Caption of a cross-point figure: CPU, ranks and nodes covered, data status, the sweep's command."""
    traces = [t for p in points for t in p.traces]
    cpus = sorted({t.cpu_identity for t in traces})
    ranks = sorted({p.id.ranks for p in points})
    nodes = sorted({p.id.nodes for p in points})
    simulated = sum(t.simulated for t in traces)
    status = (f"{status_text(True)} data in {simulated} of {len(traces)} traces" if simulated
              else "measured data")
    span = lambda v: f"{v[0]}" if len(v) == 1 else f"{v[0]}–{v[-1]}"  # noqa: E731
    cmd = points[0].id.config if points else ""
    return (f"{'; '.join(cpus)} · {span(ranks)} ranks on {span(nodes)} node(s), {len(points)} points, "
            f"{len(traces)} traces · {status} · {cmd}")


def sweep_stem(points: list[Point]) -> str:
    """File-name prefix of a sweep's figures: kind, scaling, launcher and a short hash of the configuration."""
    pid = points[0].id
    digest = hashlib.sha1(f"{pid.bench}|{pid.config}".encode()).hexdigest()[:6]
    return file_stem(f"sweep-{pid.bench}-{pid.scaling}-{pid.launcher}-{digest}")


def points_table(points: list[Point]) -> pd.DataFrame:
    """One row per point of a sweep: layout, ranks, pass labels, CPU, data status."""
    return pd.DataFrame([{"point": p.id.layout, "nodes": p.id.nodes, "tasks_per_node": p.id.tasks_per_node,
                          "cpus_per_task": p.id.cpus_per_task, "ranks": p.id.ranks, "passes": ", ".join(p.passes),
                          "cpu": "; ".join(sorted({t.cpu_identity for t in p.traces})),
                          "data": ", ".join(sorted({status_text(t.simulated) for t in p.traces}))} for p in points])


@dataclass
class Section:
    """A cross-point section of the report, built by a kind module: text, figures (by name), tables."""

    title: str
    stem: str  # file-name prefix of its figures
    intro: list[str]
    figures: dict
    tables: list[str]


@dataclass(frozen=True)
class Options:
    """What the user chose for the report and figures (``--case`` for trainer scaling)."""

    case: str = "best"


def machine_identity(trace: Trace) -> tuple[tuple[str, str], ...]:
    """(key, value) of the provenance's cpu_* and cache keys (module docstring)."""
    out = []
    for key in sorted(trace.provenance):
        if not (key.startswith("cpu_") or "cache" in key or key == "memory_bytes") or key in PER_LAYOUT_KEYS:
            continue
        value = str(trace.provenance[key])
        if key == "cpu_flags":
            value = f"{len(value.split())} flags, sha1 {hashlib.sha1(value.encode()).hexdigest()[:10]}"
        out.append((key, value))
    return tuple(out)


# --- the tolerant scan and its status section ---------------------------------------------------

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
    for path in files.traces:
        try:
            loaded[_real(path)] = load_trace(path)
        except TraceError as exc:
            problems[_real(path)] = exc.problem
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


def _relative(path: Path | None, root: Path) -> str:
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
                               "file": _relative(r.path, scan.root),
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
        envs.setdefault(tuple(t.kernel_env.items()), []).append(trace_stem(scan.root, t))
    if len(envs) > 1:
        lines += [f"> **Warning:** the traces ran under {len(envs)} different kernel-relevant environments "
                  "(OMP_*, OPENBLAS_*, MKL_*, KMP_*, GOMP_*, ONEDNN_*/DNNL_* variables), so their kernels may "
                  "differ:", ""]
        rows = [{"environment": " ".join(f"{k}={v}" for k, v in env) or "(none set)", "traces": len(stems),
                 "e.g.": stems[0]} for env, stems in sorted(envs.items())]
        lines += [markdown_table(pd.DataFrame(rows)), ""]
    return lines


def scan_of(campaign: Campaign) -> CampaignScan:
    """A strictly loaded campaign (e.g. one trace file) as a scan: every trace a complete run, nothing skipped."""
    points = group_points(campaign.traces)
    runs = [Run(p.id.name, label, "complete", t.path, "", 1, t) for p in points for t, label in zip(p.traces, p.passes)]
    return CampaignScan(campaign.root, campaign, points, runs, {}, "The expected runs are the traces given.")
