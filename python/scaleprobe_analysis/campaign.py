"""Campaigns: a folder of traces, what was expected of it, and the points it measured.

**Discovery.** Trace candidates are the ``*.h5`` files below the folder, except in folders named
``checkpoints``, ``segments``, ``layouts``, ``logs`` or ``report`` (at any depth) and hidden
folders: they hold trainer checkpoints (HDF5, but not traces), interrupted trainer segments,
weak-scaling layout files, job logs and reports. Their files are counted, never read.

**Two ways to load.** :func:`load_campaign` (``plot``, ``fit``, ``timeline``, ``compare``) stops at
the first bad file, as those commands always did; ``campaign_status.scan_campaign`` (``report``)
gives every expected run a status instead (that module says how).

**Point identity** comes from the trace itself, so hand-made runs group too (:func:`point_of`):
kind and benchmark (program), **nodes** = distinct values of the ``ranks`` table's ``node``
column (SLURMD_NODENAME, else the host; older traces: ``host``), **tasks per node** = nranks /
nodes, **cpus per task** = the largest ``ranks.omp_threads``, **scaling** = root attribute
``scaling`` (absent: strong), **launcher** = ``/provenance/env`` ``SCALEPROBE_LAUNCHER`` (absent:
unknown), **backend** = ``/provenance`` ``backend`` (allreduce_perf, bucket_sweep) or the root
attribute ``backend`` (trainers; absent: mpi), and the **configuration**: the command line with the program's directory, the trace
and checkpoint paths (``-o/--trace``, ``--save``, ``--resume``) and ``-q/-v`` taken out, so two
sweeps with different arguments in one folder are never mixed, and the **label** (``/provenance/env``
``SCALEPROBE_LABEL``: one point run as jobs named apart). A **sweep** (one cross-point section) is
the points that differ only in nodes × tasks per node × cpus per task, label and ``CASE_OPTIONS``
(which cases a run measures, how many samples): each point's own are in its section's points
table; a layout that would appear twice in one sweep splits it by configuration. Traces of one point are its
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

from scaleprobe_sweep import dimensions
from .style import status_text
from .textfmt import file_stem
from .trace import Trace, TraceError, load_traces

NON_TRACE_DIRS = ("checkpoints", "segments", "layouts", "logs", "report")
STATUSES = ("complete", "partial", "failed", "missing", "incomplete", "unreadable")
BENCH_OF_PROGRAM = {"allreduce_perf": "allreduce", "collective_perf": "collective"}  # the job scripts' name where it differs from the binary's
PER_LAYOUT_KEYS = ("rank_cache_share_bytes",)
# Paths that differ from run to run, and --backend (a point's own field, so that one configuration run on
# two backends is two sweeps of one configuration).
DROPPED_WITH_VALUE = ("-o", "--trace", "--save", "--resume", "--backend")
DROPPED_FLAGS = ("-q", "--quiet", "-v", "--verbose")
# Options that choose which cases a run measures and how many samples it takes, not what a case is
# (message sizes, bucket caps, algorithms, timed and warm-up iterations), per benchmark: points that
# differ only in them share one cross-point section (module docstring).
CASE_OPTIONS = {
    "allreduce": ("-b", "--min-bytes", "--minbytes", "-e", "--max-bytes", "--maxbytes", "-f", "--factor",
                  "--stepfactor", "--sizes", "-a", "--algorithms", "-n", "--iters", "-w", "--warmup",
                  "--warmup_iters"),
    "bucket_sweep": ("-c", "--caps", "-a", "--algorithms", "-n", "--iters", "-w", "--warmup", "--warmup_iters"),
}
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
    traces = load_traces(files.traces)
    bad = next((t for t in traces if isinstance(t, TraceError)), None)
    if bad is not None:
        raise bad
    return Campaign(root=root, traces=traces)


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
    backend: str
    ranks: int
    nodes: int
    tasks_per_node: float
    cpus_per_task: int
    label: str = ""  # the sweep's label dimension (SCALEPROBE_LABEL): one point run as jobs named apart

    @property
    def sweep_config(self) -> str:
        """config without the benchmark's CASE_OPTIONS."""
        return split_case_options(self.bench, self.config)[0]

    @property
    def case_options(self) -> str:
        """The CASE_OPTIONS of config, as given."""
        return split_case_options(self.bench, self.config)[1]

    @property
    def sweep(self) -> tuple:
        """Points that differ only in nodes × tasks per node × cpus per task, label and case options form
        one sweep (:func:`sweeps`)."""
        return (self.kind, self.bench, self.sweep_config, self.scaling, self.launcher, self.backend)

    @property
    def layout(self) -> str:
        """'2×4×1': nodes × tasks per node × cpus per task, then the label if any ('128×8×1 ring')."""
        return f"{self.nodes}×{self.tasks_per_node:g}×{self.cpus_per_task}" + (f" {self.label}" if self.label else "")

    @property
    def name(self) -> str:
        """The job's point name, e.g. allreduce_N2_t4_c1 (what the status section lists); an unknown
        launcher (a run outside the job scripts) is not named."""
        values = dimensions.defaults()
        for key, value in (("scaling", self.scaling), ("launcher", self.launcher), ("backend", self.backend)):
            if value in dimensions.BY_KEY[key].choices:
                values[key] = value
        values["label"] = self.label
        return dimensions.point_name(self.bench, self.nodes, f"{self.tasks_per_node:g}", self.cpus_per_task, values)


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
    rest, _ = take_options(argv[1:], DROPPED_WITH_VALUE)
    return shlex.join([Path(argv[0]).name] + [arg for arg in rest if arg not in DROPPED_FLAGS])


def take_options(words: list[str], names: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """``words`` (a command line's arguments) split into the rest and the options ``names`` with their
    values, each as given: ``--name value``, ``--name=value``, ``-n value`` or ``-nVALUE``."""
    rest, taken, i = [], [], 0
    while i < len(words):
        word = words[i]
        long = word.startswith("--")
        if (word.split("=", 1)[0] if long else word[:2]) in names:
            attached = "=" in word if long else len(word) > 2
            takes_value = not attached and i + 1 < len(words)
            taken += words[i:i + 1 + takes_value]
            i += 1 + takes_value
        else:
            rest.append(word)
            i += 1
    return rest, taken


def split_case_options(bench: str, config: str) -> tuple[str, str]:
    """``config`` without the benchmark's CASE_OPTIONS (and their values), and those options: the
    configuration a sweep's points share, and what each point chose for itself."""
    selectors = CASE_OPTIONS.get(bench, ())
    if not selectors or not config:
        return config, ""
    words = shlex.split(config)
    rest, cases = take_options(words[1:], selectors)
    return shlex.join(words[:1] + rest), shlex.join(cases)


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
                   # allreduce_perf and bucket_sweep record it in provenance, the trainers as an attribute
                   backend=str(trace.provenance.get("backend", trace.attrs.get("backend", "mpi"))),
                   ranks=ranks, nodes=nodes, tasks_per_node=tpn, cpus_per_task=cpt,
                   label=str(trace.env.get("SCALEPROBE_LABEL", "")))


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
    """Points grouped by :attr:`PointId.sweep`, in sorted order (a sweep's points by ranks, nodes). A group
    in which two points would have the same layout (two case lists run at one layout without labels) is
    split by the whole configuration instead: a table's rows name their point by its layout."""
    groups: dict[tuple, list[Point]] = {}
    for p in points:
        groups.setdefault(p.id.sweep, []).append(p)
    parts = []
    for group in groups.values():
        if len({p.id.layout for p in group}) == len(group):
            parts.append(group)
            continue
        by_config: dict[str, list[Point]] = {}
        for p in group:
            by_config.setdefault(p.id.config, []).append(p)
        parts += by_config.values()
    # Sweeps in the order of their first configuration (as when a sweep was one command line), points by size.
    first = lambda g: min((p.id.kind, p.id.bench, p.id.config, p.id.scaling, p.id.launcher, p.id.backend)  # noqa: E731
                          for p in g)
    return [sorted(g, key=lambda p: (p.id.ranks, p.id.nodes, p.id.tasks_per_node, p.id.cpus_per_task, p.id.label,
                                     p.id.config)) for g in sorted(parts, key=first)]


def sweep_command(points: list[Point]) -> str:
    """The command line of a sweep's points: the one they share, or, when their case options differ, the
    rest of it (each point's own case options are in :func:`points_table`)."""
    configs = {p.id.config for p in points}
    if len(configs) == 1:
        return next(iter(configs))
    return points[0].id.sweep_config


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
    cmd = sweep_command(points) if points else ""
    return (f"{'; '.join(cpus)} · {span(ranks)} ranks on {span(nodes)} node(s), {len(points)} points, "
            f"{len(traces)} traces · {status} · {cmd}")


def sweep_stem(points: list[Point]) -> str:
    """File-name prefix of a sweep's figures: kind, scaling, launcher, backend (unless MPI) and a short hash
    of the configuration."""
    pid = points[0].id
    digest = hashlib.sha1(f"{pid.bench}|{pid.config}".encode()).hexdigest()[:6]
    backend = "" if pid.backend == "mpi" else f"-{pid.backend}"
    return file_stem(f"sweep-{pid.bench}-{pid.scaling}-{pid.launcher}{backend}-{digest}")


def sweep_title(what: str, points: list[Point]) -> str:
    """A cross-point section's title: what, the scaling and, unless MPI, the backend."""
    pid = points[0].id
    return f"{what} ({pid.scaling} scaling" + ("" if pid.backend == "mpi" else f", backend {pid.backend}") + ")"


@dataclass(frozen=True)
class BackendCases:
    """A kind's cases for the backends-side-by-side section: ``table`` has the columns point, ranks, the
    ``keys`` (what a case is) and the ``values`` ({column: heading with unit}); one row per point and case,
    passes combined (median)."""

    table: pd.DataFrame
    keys: list[str]
    values: dict[str, str]


def points_table(points: list[Point]) -> pd.DataFrame:
    """One row per point of a sweep: layout, ranks, pass labels, CPU, data status, and each point's case
    options when they differ (:func:`sweep_command`)."""
    table = pd.DataFrame([{"point": p.id.layout, "nodes": p.id.nodes, "tasks_per_node": p.id.tasks_per_node,
                           "cpus_per_task": p.id.cpus_per_task, "ranks": p.id.ranks, "passes": ", ".join(p.passes),
                           "cpu": "; ".join(sorted({t.cpu_identity for t in p.traces})),
                           "data": ", ".join(sorted({status_text(t.simulated) for t in p.traces}))} for p in points])
    if len({p.id.config for p in points}) > 1:
        table["case_options"] = [p.id.case_options for p in points]
    return table


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
