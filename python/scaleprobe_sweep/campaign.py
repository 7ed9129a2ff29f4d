"""A campaign: where its traces go and its sweeps, from a campaign file (TOML or JSON) or from
the flags of one sweep, validated as a whole before anything is submitted, and expanded to
points in a stable order.

Precedence of a sweep setting: the command line, then the sweep's own table, then the file's
[defaults], then the built-in default. Paths in a campaign file are relative to its folder.
"""
from __future__ import annotations

import itertools
import json
import os
import sys
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from . import benchargs, dimensions, naming
from .dimensions import DIMENSIONS
from .errors import SweepError
from .settings import (CAMPAIGN_NAME_HINT, REPORT_KEYS, SWEEP_SETTINGS, TRAINERS, BadValue, campaign_name_ok,
                       sweep_defaults)

TOP_KEYS = ("name", "results", "build_dir", "site_env", "analysis", "dry_run", "defaults", "sweep")


@dataclass(frozen=True)
class Sweep:
    index: int                       # its place among the file's [[sweep]] tables, from 1 (0: flags)
    bench: str
    nodes: Tuple[int, ...]
    tasks_per_node: Tuple[int, ...]
    cpus_per_task: Tuple[int, ...]
    dims: Tuple[Tuple[str, Tuple[Any, ...]], ...]   # (key, its values) per dimension, in table order
    srun_mpi: str
    repeat: int
    args: Tuple[str, ...]
    time: str
    partition: str
    account: str
    qos: str
    sbatch_options: Tuple[str, ...]
    array_mode: bool
    shared: bool
    requeue: bool
    warn_before: int

    def values(self, key: str) -> Tuple[Any, ...]:
        return dict(self.dims)[key]

    def points(self) -> List["Point"]:
        """The cartesian product: the dimensions that do not alternate outermost (so the points an
        array can hold stay together), then the passes, pass 1 of every point before pass 2 of any,
        then the alternating dimensions (backend: pass k runs on every backend before pass k + 1 on
        any, so a drift of the machine over the campaign does not fall on one backend alone), then
        the geometry."""
        outer = [d.key for d in DIMENSIONS if not d.alternate]
        inner = [d.key for d in DIMENSIONS if d.alternate]
        out = []
        for o in itertools.product(*(self.values(key) for key in outer)):
            for k in range(1, self.repeat + 1):
                for i in itertools.product(*(self.values(key) for key in inner)):
                    given = dict(zip(outer + inner, o + i))
                    values = resolved(given)
                    out += [Point(self, n, t, c, tuple((d.key, values[d.key]) for d in DIMENSIONS), k)
                            for n in self.nodes for t in self.tasks_per_node for c in self.cpus_per_task]
        return out


def resolved(given: Dict[str, Any]) -> Dict[str, Any]:
    """One point's dimension values after the rules between them (dimensions.resolve)."""
    return dimensions.resolve(given, lambda key, value: f"{dimensions.BY_KEY[key].flag} {value}")


@dataclass(frozen=True)
class Point:
    sweep: Sweep
    nodes: int
    tasks_per_node: int
    cpus_per_task: int
    dims: Tuple[Tuple[str, Any], ...]   # (key, value) per dimension, in table order
    pass_no: int

    def value(self, key: str) -> Any:
        return dict(self.dims)[key]

    @property
    def name(self) -> str:
        return dimensions.point_name(self.sweep.bench, self.nodes, self.tasks_per_node, self.cpus_per_task,
                                     dict(self.dims))

    @property
    def stem(self) -> str:
        return naming.stem(self.name, self.pass_no)


@dataclass(frozen=True)
class Campaign:
    file: Optional[Path]             # the campaign file; None: the flags of one sweep
    name: str
    results: Path
    build_dir: Path
    site_env: Optional[Path]
    sim_build_dir: Path              # the smpi preset's build: the programs of simulated points
    analysis: bool
    dry_run: bool
    report: Dict[str, Any]           # REPORT_KEYS: the report job's sbatch settings
    sweeps: Tuple[Sweep, ...]

    @property
    def folder(self) -> Path:
        return self.results / self.name

    def points(self) -> List[Point]:
        return [p for s in self.sweeps for p in s.points()]

    def describe(self) -> Dict[str, Any]:
        """JSON-able: what campaign.json stores about this call's campaign."""
        return {"file": str(self.file) if self.file else None, "name": self.name,
                "results": str(self.results), "build_dir": str(self.build_dir),
                "sim_build_dir": str(self.sim_build_dir),
                "site_env": str(self.site_env) if self.site_env else None, "analysis": self.analysis,
                "report": {k: list(v) if isinstance(v, tuple) else v for k, v in self.report.items()},
                "sweeps": [_described(s) for s in self.sweeps]}


def _described(s: Sweep) -> Dict[str, Any]:
    """A sweep as campaign.json stores it: every setting by its campaign-file key."""
    flat = {k: v for k, v in asdict(s).items() if k not in ("index", "dims")}
    flat.update(dict(s.dims))
    return {k: list(v) if isinstance(v, tuple) else v for k, v in flat.items()}


@dataclass
class Request:
    """What the command line asked for. sweep: setting key -> (how it was written, e.g.
    "--nodes 1,x", for messages; the value as a campaign file would hold it)."""
    argv: List[str]
    sweep: Dict[str, Tuple[str, Any]] = field(default_factory=dict)
    bench_args: Optional[List[str]] = None    # after --
    file: Optional[str] = None
    campaign: Optional[str] = None
    results: Optional[str] = None
    build_dir: Optional[str] = None
    site_env: Optional[str] = None
    analysis: bool = False
    dry_run: bool = False


# ---------------------------------------------------------------- reading values

def _typed(key: str, raw: Any, where: str) -> Any:
    """The setting's typed value; a bad one is a SweepError saying `where: problem`."""
    try:
        return SWEEP_SETTINGS[key].coerce(raw)
    except BadValue as e:
        raise SweepError(f"{where}: {e}") from None


def _flag_values(req: Request) -> Dict[str, Any]:
    return {key: _typed(key, raw, label) for key, (label, raw) in req.sweep.items()}


def _table_values(file: Path, where: str, table: Any) -> Dict[str, Any]:
    if not isinstance(table, dict):
        raise SweepError(f"{file}: {where}: expected a table of settings")
    for key in table:
        if key not in SWEEP_SETTINGS:
            raise SweepError(f"{file}: {where}: unknown key '{key}' (known: {', '.join(SWEEP_SETTINGS)})")
    return {key: _typed(key, raw, f"{file}: {where}.{key} = {json.dumps(raw)}") for key, raw in table.items()}


def _read_file(path: Path) -> Dict[str, Any]:
    if not path.is_file():
        raise SweepError(f"--file {path}: no such file")
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".toml":
        try:
            import tomllib
        except ImportError:
            raise SweepError(f"{path}: reading TOML needs Python 3.11 or newer (tomllib), this is "
                             f"{sys.version.split()[0]}: use a .json campaign file or a newer python3") from None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SweepError(f"{path}: not valid TOML: {e}") from None
    elif path.suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError as e:
            raise SweepError(f"{path}: not valid JSON: {e}") from None
        if not isinstance(data, dict):
            raise SweepError(f"{path}: expected a JSON object with the campaign's settings")
    else:
        raise SweepError(f"--file {path}: use a .toml or .json campaign file")
    for key in data:
        if key not in TOP_KEYS:
            raise SweepError(f"{path}: unknown key '{key}' (known: {', '.join(TOP_KEYS)})")
    return data


def _top(file: Path, data: Dict[str, Any], key: str, kind: type) -> Any:
    v = data.get(key)
    if v is not None and not isinstance(v, kind):
        want = {str: "a string", bool: "true or false"}[kind]
        raise SweepError(f"{file}: {key} = {json.dumps(v)}: expected {want}")
    return v


# ---------------------------------------------------------------- building the campaign

def _sweep(index: int, base: Dict[str, Any], own: Dict[str, Any], flags: Dict[str, Any],
           where: str, file: Optional[Path]) -> Sweep:
    """One sweep from its layers. `own` is the sweep's table (the flags without a file); a
    trainer-only setting there is refused for other benchmarks, from other layers ignored."""
    s = {**base, **own, **flags}
    if "bench" not in s:
        need = "(allreduce, collective, bucket_sweep, p2p, gpt_train or resnet_train)"
        raise SweepError(f"{file}: {where}: bench is required {need}" if file else f"--bench is required {need}")
    if s["bench"] not in TRAINERS:
        if own.get("requeue"):
            raise SweepError(f"{file}: {where}.requeue = true: requeue is for trainer jobs (gpt_train, resnet_train)"
                             if file else "--requeue is for trainer jobs (gpt_train, resnet_train)")
        s.update(requeue=False, warn_before=0)
    problem = benchargs.problem(s["bench"], s["args"])
    if problem:
        raise SweepError(f"{file}: {where}.args: {problem}" if file else problem)
    if s["bench"] == "p2p":  # p2p_perf pairs rank r with r + n/2 and moves whole messages
        if "weak" in s["scaling"]:
            problem = "scaling weak: a message between two ranks has no per-rank share to scale (use strong)"
            raise SweepError(f"{file}: {where}.{problem}" if file else f"--{problem}")
        odd = [f"{n} x {t}" for n in s["nodes"] for t in s["tasks_per_node"] if n * t % 2]
        if odd:
            problem = f"p2p pairs ranks: every point needs an even number of them ({', '.join(odd)} is odd)"
            raise SweepError(f"{file}: {where}: {problem}" if file else problem)
    if any(v != "none" for v in s["simulate"]) and max(s["cpus_per_task"]) > 1:
        problem = "cpus_per_task > 1 with simulate: a simulated rank runs one thread (SMPI)"
        raise SweepError(f"{file}: {where}: {problem}" if file else problem)
    for d in DIMENSIONS:
        if d.benches and s["bench"] not in d.benches and s[d.key] != (d.default,):
            problem = f"{d.key} is for {', '.join(d.benches)} (this sweep runs {s['bench']})"
            raise SweepError(f"{file}: {where}.{problem}" if file else f"{d.flag}: {problem}")
    dims = tuple((d.key, s[d.key]) for d in DIMENSIONS)
    sweep = Sweep(index=index, dims=dims, **{f.name: s[f.name] for f in fields(Sweep) if f.name not in ("index", "dims")})
    try:
        for combo in itertools.product(*(values for _, values in dims)):
            resolved(dict(zip((d.key for d in DIMENSIONS), combo)))
    except dimensions.BadValue as e:
        raise SweepError(f"{file}: {where}: {e}" if file else str(e)) from None
    return sweep


def _path(text: str, relative_to: Path) -> Path:
    return Path(os.path.realpath(relative_to / os.path.expanduser(text)))


def _check_unique(file: Optional[Path], sweeps: Tuple[Sweep, ...]) -> None:
    # Two points with one name would write, resume and skip each other's traces.
    seen: Dict[str, Point] = {}
    for p in (p for s in sweeps for p in s.points()):
        if p.stem in seen:
            a, b = seen[p.stem].sweep.index, p.sweep.index
            if not file:
                flags = ", ".join(["--nodes", "--tasks-per-node", "--cpus-per-task"] + [d.flag for d in DIMENSIONS])
                raise SweepError(f"point {p.name} is listed twice: check {flags}")
            which = f"sweep[{a}] lists" if a == b else f"sweep[{a}] and sweep[{b}] both list"
            raise SweepError(f"{file}: {which} point {p.name} (a trace name must be unique in a campaign: "
                             "a label tells two sweeps' points apart)")
        seen[p.stem] = p


def _from_flags(req: Request, base: Dict[str, Any], flags: Dict[str, Any], env: Dict[str, str]):
    """One sweep from the flags alone -> (sweeps, report settings, campaign name)."""
    flags["args"] = _typed("args", list(req.bench_args or []), "benchmark argument")
    sweeps = (_sweep(0, base, flags, {}, "", None),)
    report = {k: flags.get(k, base[k]) for k in REPORT_KEYS}
    name = req.campaign if req.campaign is not None else env.get("SCALEPROBE_CAMPAIGN") or "default"
    return sweeps, report, name


def _from_file(req: Request, file: Path, data: Dict[str, Any], base: Dict[str, Any], flags: Dict[str, Any]):
    """The sweeps of a campaign file, the flags over them -> (sweeps, report settings, name)."""
    if "bench" in flags:
        raise SweepError("--bench cannot be combined with --file: every sweep of the file names its bench")
    if req.bench_args is not None:
        raise SweepError("benchmark arguments after -- cannot be combined with --file: give them as the sweep's args")
    for key, kind in (("name", str), ("results", str), ("build_dir", str), ("site_env", str),
                      ("analysis", bool), ("dry_run", bool)):
        _top(file, data, key, kind)
    defaults = _table_values(file, "defaults", data.get("defaults", {}))
    tables = data.get("sweep")
    if not isinstance(tables, list) or not tables:
        raise SweepError(f"{file}: no sweeps: add [[sweep]] tables (a JSON list \"sweep\") with at least a bench")
    sweeps = tuple(_sweep(i, {**base, **defaults}, _table_values(file, f"sweep[{i}]", t), flags, f"sweep[{i}]", file)
                   for i, t in enumerate(tables, 1))
    if flags.get("requeue") and not any(s.bench in TRAINERS for s in sweeps):
        raise SweepError("--requeue is for trainer jobs (gpt_train, resnet_train): the file has none")
    report = {k: flags.get(k, defaults.get(k, base[k])) for k in REPORT_KEYS}
    name = req.campaign if req.campaign is not None else data.get("name")
    if name is None:
        raise SweepError(f"{file}: name is required (the campaign folder below the results root), or pass --campaign")
    return sweeps, report, name


def _path_setting(flag_value: Optional[str], key: str, file: Optional[Path], data: Optional[Dict[str, Any]],
                  env: Dict[str, str], var: str, default: Optional[Path]) -> Tuple[Optional[Path], str]:
    """A path from its flag (relative to the working folder), the campaign file (relative to the
    file's folder), the environment or the default; and how to name its origin in a message."""
    flag = "--" + key.replace("_", "-")
    if flag_value == "":
        raise SweepError(f"{flag} needs a path")
    if flag_value is not None:
        return _path(flag_value, Path.cwd()), f"{flag} "
    if data is not None and data.get(key):
        return _path(data[key], file.parent), f"{file}: {key} = "
    if env.get(var):
        return _path(env[var], Path.cwd()), f"{var}="
    return default, ""


def build(req: Request, root: Path, env: Dict[str, str]) -> Campaign:
    """The campaign the command line asks for, every value checked."""
    try:
        base = sweep_defaults(env)
    except BadValue as e:
        raise SweepError(str(e)) from None
    flags = _flag_values(req)
    file = data = None
    if req.file is None:
        sweeps, report, name = _from_flags(req, base, flags, env)
    else:
        file = _path(req.file, Path.cwd())
        data = _read_file(file)
        sweeps, report, name = _from_file(req, file, data, base, flags)
    if not campaign_name_ok(name):
        raise SweepError(f"{file}: name = {json.dumps(name)}: {CAMPAIGN_NAME_HINT}" if file and req.campaign is None
                         else f"campaign '{name}': {CAMPAIGN_NAME_HINT}")
    _check_unique(file, sweeps)
    # An installed tree (<prefix>/share/scaleprobe, cmake --install): programs in <prefix>/bin,
    # results below the working folder; a repository: build/release and results/ in it.
    installed = (root / "installed").is_file()
    results, _ = _path_setting(req.results, "results", file, data, env, "SCALEPROBE_RESULTS",
                               Path.cwd() / "results" if installed else root / "results")
    build_dir, _ = _path_setting(req.build_dir, "build_dir", file, data, env, "SCALEPROBE_BUILD_DIR",
                                 root.parent.parent if installed else root / "build" / "release")
    site_default = root / "jobs" / "site.env"
    site_env, site_from = _path_setting(req.site_env, "site_env", file, data, env, "SCALEPROBE_SITE_ENV",
                                        site_default if site_default.is_file() else None)
    if site_env is not None and not site_env.is_file():
        raise SweepError(f"{site_from}{site_env}: no such file")
    sim_build_dir = _path(env.get("SCALEPROBE_SIM_BUILD_DIR") or str(root / "build" / "smpi"), Path.cwd())
    for v in (str(results), str(build_dir), str(site_env or ""), str(root), str(sim_build_dir), name):
        if "," in v:
            raise SweepError(f"'{v}': paths with commas cannot be passed through sbatch --export")
        if "\t" in v or "\n" in v:
            raise SweepError(f"'{v}': paths with tabs or newlines cannot be recorded in the manifest")
    return Campaign(file=file, name=name, results=results, build_dir=build_dir, site_env=site_env,
                    sim_build_dir=sim_build_dir,
                    analysis=req.analysis or bool(data and data.get("analysis")),
                    dry_run=req.dry_run or bool(data and data.get("dry_run")), report=report, sweeps=sweeps)
