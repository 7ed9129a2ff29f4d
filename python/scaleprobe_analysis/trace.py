"""Load and validate scaleprobe HDF5 traces (schema: docs/trace-schema.md).

A trace is one HDF5 file per run. Every top-level group except ``/provenance`` is a table
(one 1-D dataset per column); this module turns each table into a pandas DataFrame with
strings decoded, and the root and provenance attributes into plain Python dicts.

Validation mirrors the C++ ``trace_check``: a file is refused when it is missing, named
``*.partial``, not HDF5 (corrupt or truncated), not a scaleprobe trace, of another schema
version, incomplete, when its whole-file digest (schema version 3, :mod:`.digest`) does not match,
checked before h5py opens the file, when a column fails its Fletcher32 checksum (h5py verifies it
on every read since schema version 2; version 1 has none), or when a table's columns disagree in length; a trainer trace (kind
``train``) written by the data-parallel engine is also refused when a table or column the
analysis needs is missing or when its ranks did not all record the same steps. Every refusal is a
:class:`TraceError` whose ``str()`` is a single line ``<file>: <problem>``, so callers can
print it as is.

The bytes are read once: a file with a digest is opened from the bytes whose digest matched; one
without (schema 1/2) is read by libhdf5 only in an isolated child process (:mod:`.h5open`), so a
crash, hang or runaway allocation on a damaged older file is a TraceError ("unreadable: ...").
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import h5py
import numpy as np
import pandas as pd

from . import digest, h5open

SCHEMA_NAME = "scaleprobe-trace"
SCHEMA_VERSION = 3  # 3: a whole-file digest in the user block; 2: Fletcher32 on every column with data
FIRST_DIGEST_SCHEMA_VERSION = 3
OLDEST_SCHEMA_VERSION = 1  # no checksums; still read (1 and 2 have no digest)
TABLE_SCOPES = ("shared", "per_rank")


# CPU features that decide which kernels run, as captions name them (flag in /provenance cpu_isa).
ISA_HIGHLIGHTS = (("avx2", "AVX2"), ("avx512f", "AVX-512"), ("avx512_bf16", "BF16"), ("amx_tile", "AMX"),
                  ("sve", "SVE"))
# Environment variables that change kernels or their threads (BLAS, OpenMP, oneDNN, MKL).
KERNEL_ENV_PREFIXES = ("OMP_", "OPENBLAS_", "GOTO_", "MKL_", "KMP_", "GOMP_", "ONEDNN_", "DNNL_")


class TraceError(Exception):
    """A file that is not a usable scaleprobe trace; ``str(e)`` is ``'<file>: <problem>'``."""

    def __init__(self, path: str | Path, problem: str):
        self.path = str(path)
        self.problem = " ".join(str(problem).split())  # always one line
        super().__init__(f"{self.path}: {self.problem}")


@dataclass(frozen=True)
class TableMeta:
    """What the schema stores next to a table: scope, description and per-column units."""

    scope: str
    description: str
    units: dict[str, str]
    descriptions: dict[str, str]


@dataclass(frozen=True)
class Trace:
    """One validated trace: root attributes, provenance and every table as a DataFrame."""

    path: Path
    attrs: dict
    provenance: dict
    env: dict
    slurm: dict
    tables: dict[str, pd.DataFrame]
    meta: dict[str, TableMeta]

    @property
    def kind(self) -> str:
        return self.attrs["kind"]

    @property
    def nranks(self) -> int:
        return int(self.attrs["nranks"])

    @property
    def machine(self) -> str:
        return self.attrs.get("machine") or self.provenance.get("hostname", "unknown machine")

    @property
    def cpu_identity(self) -> str:
        """The CPU as a caption names it: model, family/model/stepping and the ISA that picks kernels.

        Different CPUs can share a model name ("Intel(R) Xeon(R) Processor" on a Cooper Lake and on an
        AMX Xeon), so the signature and ISA go with it; older traces give the model name only.
        """
        model = str(self.provenance.get("cpu_model") or self.machine)
        sig = re.search(r"family (\S+) model (\S+) stepping (\S+)", str(self.provenance.get("cpu_signature", "")))
        isa = set(str(self.provenance.get("cpu_isa", "")).split())
        features = [name for flag, name in ISA_HIGHLIGHTS if flag in isa]
        if "AVX-512" in features and "AVX2" in features:
            features.remove("AVX2")
        detail = [f"fam {sig[1]} model {sig[2]} step {sig[3]}"] if sig else []
        detail += [", ".join(features)] if features else []
        return f"{model} ({'; '.join(detail)})" if detail else model

    @property
    def kernel_env(self) -> dict[str, str]:
        """The environment variables that change which kernels run or how many threads they use, as
        the process ran with them (with the OpenBLAS core a trainer set itself)."""
        return {k: str(v) for k, v in sorted(self.env.items()) if k.startswith(KERNEL_ENV_PREFIXES)}

    @property
    def launch_kernel_env(self) -> dict[str, str]:
        """kernel_env as the run was launched: without OPENBLAS_CORETYPE where the program set it
        itself (it then also set SCALEPROBE_BLAS_CORE_DETECTED, kernels/blas.hpp; its choice is the
        blas_core attribute). Runs launched alike can differ here only by what the user set."""
        env = self.kernel_env
        if "SCALEPROBE_BLAS_CORE_DETECTED" in self.env:
            env.pop("OPENBLAS_CORETYPE", None)
        return env

    @property
    def simulated(self) -> bool:
        """True unless the root attribute says the data was measured (``simulated == 0``)."""
        return int(self.attrs.get("simulated", 1)) != 0

    @property
    def name(self) -> str:
        """Short label for file names and headings: the file name without ``.h5``."""
        return self.path.name[: -len(".h5")] if self.path.name.endswith(".h5") else self.path.name

    @property
    def nodes(self) -> list[str]:
        """The distinct nodes the ranks ran on, sorted.

        From the ``ranks`` table's ``node`` column (SLURMD_NODENAME, else the host name); older
        traces have only ``host``; without a ``ranks`` table, the provenance's ``hosts`` list.
        """
        ranks = self.tables.get("ranks")
        for column in ("node", "host"):
            if ranks is not None and column in ranks and len(ranks):
                return sorted(set(ranks[column]))
        return sorted(h for h in str(self.provenance.get("hosts", "")).split(",") if h) or ["?"]

    def table(self, name: str) -> pd.DataFrame:
        """The table ``name``; a missing table is a :class:`TraceError` naming the file."""
        if name not in self.tables:
            raise TraceError(self.path, f"no '{name}' table (kind '{self.kind}')")
        return self.tables[name]

    def memory_copy_GBps(self) -> float | None:
        """Per-rank STREAM-style copy bandwidth from ``/provenance``, or None if not measured."""
        raw = self.provenance.get("memory_copy_GBps_per_rank", "")
        try:
            value = float(raw)
        except ValueError:
            return None
        return value if value > 0 else None


def _decode(value):
    """HDF5 attribute value → plain Python (bytes → str, numpy scalars → int/float)."""
    if isinstance(value, (bytes, np.bytes_)):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, np.ndarray) and value.shape == ():
        return _decode(value[()])
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return [_decode(v) for v in value]
    return value


def _attrs(obj) -> dict:
    return {k: _decode(v) for k, v in obj.attrs.items()}


def _column(path: Path, table: str, name: str, ds) -> np.ndarray:
    """Read one column dataset; strings become a Python-str object array."""
    if not isinstance(ds, h5py.Dataset):
        raise TraceError(path, f"table '{table}' member '{name}' is not a dataset")
    if ds.ndim != 1:
        raise TraceError(path, f"table '{table}' column '{name}' is {ds.ndim}-D, expected 1-D")
    kind = ds.dtype.kind
    if kind not in "iufS":
        raise TraceError(path, f"table '{table}' column '{name}' has unsupported type {ds.dtype}")
    try:
        values = ds[()]
    except OSError as exc:  # h5py raises OSError when HDF5's Fletcher32 filter finds a mismatch
        if ds.fletcher32:
            raise TraceError(path, f"table '{table}' column '{name}' fails its Fletcher32 checksum (corrupt)") from exc
        raise
    if kind == "S":
        values = np.array([v.decode("utf-8", errors="replace") for v in values], dtype=object)
    return values


def _read_table(path: Path, name: str, group, nranks: int, version: int) -> tuple[pd.DataFrame, TableMeta]:
    """Read and check one table group: rows attribute, equal column lengths, scope, ranks."""
    attrs = _attrs(group)
    if "rows" not in attrs:
        raise TraceError(path, f"table '{name}' has no 'rows' attribute")
    rows = int(attrs["rows"])
    scope = attrs.get("scope", "")
    if scope not in TABLE_SCOPES:
        raise TraceError(path, f"table '{name}' has unknown scope '{scope}'")
    columns, units, descriptions = {}, {}, {}
    for col in group:  # h5py iterates in link creation order when it is tracked
        ds = group[col]
        if isinstance(ds, h5py.Dataset) and ds.ndim == 1 and ds.shape[0] != rows:
            raise TraceError(path, f"table '{name}' column '{col}' has {ds.shape[0]} rows, expected {rows}")
        if version >= 2 and isinstance(ds, h5py.Dataset) and ds.size > 0 and not ds.fletcher32:
            raise TraceError(path, f"table '{name}' column '{col}' has no checksum (schema version {version} requires one)")
        columns[col] = _column(path, name, col, ds)
        col_attrs = _attrs(ds)
        units[col] = col_attrs.get("unit", "")
        descriptions[col] = col_attrs.get("description", "")
    if scope == "per_rank" and rows > 0:
        if "rank" not in columns:
            raise TraceError(path, f"per-rank table '{name}' has no 'rank' column")
        ranks = columns["rank"]
        if ranks.min() < 0 or ranks.max() >= nranks:
            bad = int(ranks.max() if ranks.max() >= nranks else ranks.min())
            raise TraceError(path, f"table '{name}' names rank {bad} of {nranks}")
    frame = pd.DataFrame(columns) if columns else pd.DataFrame(index=range(rows))
    return frame, TableMeta(scope, attrs.get("description", ""), units, descriptions)


# Trainer traces of the data-parallel engine (trainers/dp/engine.cpp): what the analysis reads.
# (Traces since 2026-11-23 also have cases.reference_comm_s / hidden_fraction and the per-bucket
# peers/transfer/queued split; older ones an `overlap` column, which is no longer read: it divided
# by a busy time that included the handshake and waiting for a core. Traces since 2026-11-26 also
# have the overlap modes' progress_s and exposed-wait split, read where present; a --no-comm run,
# root attribute no_comm = 1, has no buckets table, as local SGD.)
TRAIN_COLUMNS = {
    "iterations": ("rank", "step", "case", "step_start_s", "data_s", "forward_s", "backward_s", "wait_s",
                   "optimizer_s", "average_s", "step_s", "step_cpu_s", "process_cpu_s", "compute_s", "comm_s",
                   "comm_cpu_s", "exposed_comm_s", "in_summary"),
    "cases": ("case", "algorithm", "bucket_cap", "cap_bytes", "buckets", "steps", "iteration_mean_s",
              "compute_mean_s", "comm_mean_s", "exposed_comm_mean_s"),
    "buckets": ("rank", "step", "case", "bucket", "ready_s", "start_s", "end_s", "cpu_s"),
    "samples": ("rank", "case", "iteration", "phase", "bucket", "start_s", "wall_s", "cpu_s"),
    "phases": ("name",),
}


def _check_train(path: Path, attrs: dict, tables: dict[str, pd.DataFrame]) -> None:
    """Refuse an engine-written train trace that lacks what the analysis reads, or is cut short.

    Older ``gpt_train`` traces (before the data-parallel engine: no ``scaling`` attribute and no
    ``iterations`` table) are accepted as they are.
    """
    if "iterations" not in tables and "scaling" not in attrs:
        return
    communicates = int(attrs.get("local_sgd", 0)) == 0 and int(attrs.get("no_comm", 0)) == 0  # else no buckets
    needed = [name for name in TRAIN_COLUMNS if name != "buckets" or communicates]
    for name in needed:
        if name not in tables:
            raise TraceError(path, f"train trace without its '{name}' table (corrupt or cut short)")
        missing = [c for c in TRAIN_COLUMNS[name] if c not in tables[name].columns]
        if missing and (len(tables[name]) > 0 or name != "buckets"):  # an empty buckets table has no columns
            raise TraceError(path, f"train trace: table '{name}' lacks column(s) {', '.join(missing)}")
    it = tables["iterations"]
    nranks = int(attrs["nranks"])
    if it.empty:
        raise TraceError(path, "train trace with no steps in its 'iterations' table")
    steps = it.groupby("rank")["step"].apply(lambda s: tuple(sorted(s)))
    if len(steps) != nranks:
        absent = sorted(set(range(nranks)) - set(steps.index))
        raise TraceError(path, f"train trace: 'iterations' has no rows of rank {absent[0]} of {nranks}")
    if steps.nunique() != 1:
        counts = ", ".join(f"rank {r}: {len(v)}" for r, v in steps.items())
        raise TraceError(path, f"train trace: the ranks recorded different steps in 'iterations' ({counts})")
    unknown = sorted(set(it["case"]) - set(tables["cases"]["case"]))
    if unknown:
        raise TraceError(path, f"train trace: 'iterations' names case {unknown[0]} missing from 'cases'")


def _read_open_file(path: Path, f: h5py.File, digest_verified: bool) -> Trace:
    attrs = _attrs(f)
    schema = attrs.get("schema")
    if schema != SCHEMA_NAME:
        found = "no schema attribute" if schema is None else f"schema='{schema}'"
        raise TraceError(path, f"not a scaleprobe trace ({found}, expected '{SCHEMA_NAME}')")
    version = attrs.get("schema_version")
    if not isinstance(version, int) or not OLDEST_SCHEMA_VERSION <= version <= SCHEMA_VERSION:
        raise TraceError(path, f"unsupported trace schema version {version} "
                               f"(this reader reads versions {OLDEST_SCHEMA_VERSION} to {SCHEMA_VERSION})")
    if version >= FIRST_DIGEST_SCHEMA_VERSION and not digest_verified:
        raise TraceError(path, f"corrupt: schema version {version} requires a whole-file digest and the file has none")
    if attrs.get("complete") != 1:
        raise TraceError(path, f"incomplete trace (complete={attrs.get('complete')}: the run did not finish writing it)")
    for key in ("kind", "nranks"):
        if key not in attrs:
            raise TraceError(path, f"missing root attribute '{key}'")
    if "provenance" not in f or not isinstance(f["provenance"], h5py.Group):
        raise TraceError(path, "missing /provenance group")
    prov = f["provenance"]
    sub = {k: _attrs(prov[k]) for k in ("env", "slurm") if k in prov}
    tables, meta = {}, {}
    for name in f:
        if name == "provenance":
            continue
        if not isinstance(f[name], h5py.Group):
            raise TraceError(path, f"unexpected top-level dataset '/{name}' (tables are groups)")
        tables[name], meta[name] = _read_table(path, name, f[name], int(attrs["nranks"]), version)
    if attrs["kind"] == "train":
        _check_train(path, attrs, tables)
    return Trace(path=path, attrs=attrs, provenance=_attrs(prov), env=sub.get("env", {}),
                 slurm=sub.get("slurm", {}), tables=tables, meta=meta)


def load_trace(path: str | Path) -> Trace:
    """Load and validate one trace; raise :class:`TraceError` (one line) if it is not usable."""
    result = load_traces([path])[0]
    if isinstance(result, TraceError):
        raise result
    return result


def _image(path: Path) -> tuple[bytes, bool]:
    if not path.exists():
        raise TraceError(path, "trace file not found")
    if path.name.endswith(".partial"):
        raise TraceError(path, "incomplete trace (a run still writing it, or one that died)")
    if path.is_dir():
        raise TraceError(path, "is a directory, not a trace file")
    try:
        return h5open.read_image(path)  # the digest checked on the bytes h5py then opens
    except digest.DigestError as exc:
        raise TraceError(path, str(exc)) from exc
    except OSError as exc:
        raise TraceError(path, f"cannot read: {exc.strerror or exc}") from exc


def load_traces(paths) -> list[Trace | TraceError]:
    """:func:`load_trace` for many files: per file its Trace or its TraceError, in order. Traces
    with a digest are read in process from their verified bytes; those without one (schema 1/2)
    by libhdf5 only in an isolated child process, one child for all of them (h5open)."""
    results: list = []
    undigested: list[tuple[int, bytes, Path]] = []
    for path in map(Path, paths):
        try:
            data, verified = _image(path)
            results.append(read_image(path, data, True) if verified else None)
            if not verified:
                undigested.append((len(results) - 1, data, path))
        except TraceError as exc:
            results.append(exc)
    read = h5open.run_isolated_many("trace:read_image_isolated", [(data, path) for _, data, path in undigested])
    for (at, _, path), value in zip(undigested, read):
        results[at] = TraceError(path, str(value)) if isinstance(value, h5open.IsolatedError) else value
    return results


def read_image(path: Path, data: bytes, digest_verified: bool) -> Trace:
    """Read a trace from its bytes (see :func:`load_trace`, which checks them first)."""
    try:
        with h5open.open_image(data) as f:
            return _read_open_file(path, f, digest_verified)
    except TraceError:
        raise
    except (OSError, KeyError, ValueError, RuntimeError, TypeError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TraceError(path, f"not a readable HDF5 file (corrupt or truncated): {detail}") from exc


def read_image_isolated(data: bytes, path: str) -> Trace:
    """Run in the isolated child (h5open.run_isolated) for a trace without a digest."""
    return read_image(Path(path), data, False)
