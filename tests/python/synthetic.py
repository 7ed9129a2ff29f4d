"""Synthetic traces for the tests, written through h5py as proper, complete schema-1 traces
(with the whole-file digest in a user block, as the C++ writers since schema 3, so they read in-process).

Every file written here carries the root attribute ``simulated = 1``: these are constructed
numbers, never measurements. Two ways to make one:

- :func:`write_allreduce_trace`: an allreduce trace from scratch, from per-case sample arrays
  (ranks × iterations, seconds); the summary is computed from the samples the way the
  binaries compute it.
- :func:`scaled_copy`: a copy of a real trace with every duration (samples, summary, buckets)
  multiplied by a factor, e.g. 1.5 for "clearly slower".
"""
from __future__ import annotations

import shutil
from pathlib import Path

import h5py
import numpy as np
from helpers import edit_h5
from scaleprobe_analysis import digest

STRING = "S"


def _table(f: h5py.File, name: str, scope: str, columns: dict, units: dict | None = None) -> None:
    """One table group: equal-length 1-D columns, rows/scope/description attributes."""
    g = f.create_group(name, track_order=True)
    rows = {len(v) for v in columns.values()}
    assert len(rows) == 1, f"table {name}: columns of unequal length"
    g.attrs["rows"] = np.int64(rows.pop())
    g.attrs["scope"] = np.bytes_(scope)
    g.attrs["description"] = np.bytes_(f"synthetic {name}")
    for col, values in columns.items():
        values = np.asarray(values)
        if values.dtype.kind in "UO":
            values = np.array([str(v).encode() for v in values], dtype=STRING)
        elif values.dtype.kind in "ib":
            values = values.astype(np.int64)
        else:
            values = values.astype(np.float64)
        ds = g.create_dataset(col, data=values)
        ds.attrs["unit"] = np.bytes_((units or {}).get(col, ""))
        ds.attrs["description"] = np.bytes_(col)


def _root(f: h5py.File, kind: str, nranks: int, complete: int = 1) -> None:
    for key, value in (("schema", "scaleprobe-trace"), ("kind", kind), ("program", "synthetic"),
                       ("machine", "synthetic (constructed test data)"), ("finished_utc", "2026-01-01T00:00:00Z"),
                       ("load_average_end", "0.00 0.00 0.00")):
        f.attrs[key] = np.bytes_(value)
    f.attrs["schema_version"] = np.int64(1)
    f.attrs["complete"] = np.int64(complete)
    f.attrs["simulated"] = np.int64(1)
    f.attrs["nranks"] = np.int64(nranks)
    f.attrs["wrong_elements"] = np.int64(0)
    f.attrs["busbw_factor"] = np.float64(2 * (nranks - 1) / nranks)
    prov = f.create_group("provenance")
    for key, value in (("program", "synthetic"), ("command_line", "synthetic"), ("hostname", "synthetic"),
                       ("hosts", "synthetic"), ("nhosts", "1"), ("nranks", str(nranks)),
                       ("load_average_start", "0.00 0.00 0.00"), ("online_cpus", "2")):
        prov.attrs[key] = np.bytes_(value)
    prov.create_group("env")
    prov.create_group("slurm")


def write_allreduce_trace(path: Path, cases: list[dict], walls: list[np.ndarray]) -> Path:
    """An allreduce trace: ``cases[i]`` gives algorithm/dtype/op/placement/bytes, ``walls[i]``
    the samples (nranks × iters, seconds) of case i. Returns ``path``."""
    nranks = walls[0].shape[0]
    factor = 2 * (nranks - 1) / nranks
    samples = {k: [] for k in ("rank", "case", "iteration", "phase", "bucket", "start_s", "wall_s", "cpu_s")}
    clock = np.full(nranks, 1.0)  # each rank's own clock
    summary = {k: [] for k in ("case", "algorithm", "dtype", "op", "placement", "bytes", "count", "iters", "warmup",
                               "sync", "t_min_us", "t_mean_us", "t_max_us", "slowest_rank", "p50_us", "p99_us",
                               "algbw_GBps", "busbw_GBps", "cpu_mean_us", "runqueue_wait_us", "vs_mpi", "wrong")}
    per_rank_rows = {r: {k: [] for k in samples} for r in range(nranks)}
    for case, (spec, wall) in enumerate(zip(cases, walls)):
        wall = np.asarray(wall, dtype=float)
        iters = wall.shape[1]
        for r in range(nranks):
            rows = per_rank_rows[r]
            starts = clock[r] + np.concatenate([[0.0], np.cumsum(wall[r] + 1e-6)[:-1]])
            clock[r] = starts[-1] + wall[r, -1] + 1e-5
            rows["rank"] += [r] * iters
            rows["case"] += [case] * iters
            rows["iteration"] += list(range(iters))
            rows["phase"] += [0] * iters
            rows["bucket"] += [-1] * iters
            rows["start_s"] += list(starts)
            rows["wall_s"] += list(wall[r])
            rows["cpu_s"] += list(wall[r] * 0.98)
        means = wall.mean(axis=1) * 1e6
        slowest = wall.max(axis=0) * 1e6
        t_mean = means.mean()
        for key, value in (("case", case), ("algorithm", spec["algorithm"]), ("dtype", spec.get("dtype", "f32")),
                           ("op", spec.get("op", "sum")), ("placement", spec.get("placement", "out")),
                           ("bytes", spec["bytes"]), ("count", spec["bytes"] // 4), ("iters", iters), ("warmup", 1),
                           ("sync", "none"), ("t_min_us", means.min()), ("t_mean_us", t_mean), ("t_max_us", means.max()),
                           ("slowest_rank", int(means.argmax())), ("p50_us", np.percentile(slowest, 50)),
                           ("p99_us", np.percentile(slowest, 99)), ("algbw_GBps", spec["bytes"] / t_mean / 1e3),
                           ("busbw_GBps", spec["bytes"] / t_mean / 1e3 * factor), ("cpu_mean_us", t_mean * 0.98),
                           ("runqueue_wait_us", -1.0), ("vs_mpi", float("nan")), ("wrong", 0)):
            summary[key].append(value)
    for r in range(nranks):  # per_rank: every rank's rows concatenated in rank order
        for k in samples:
            samples[k] += per_rank_rows[r][k]
    path = Path(path)
    with h5py.File(path, "w", track_order=True, userblock_size=digest.BLOCK_BYTES) as f:
        _root(f, "allreduce", nranks)
        _table(f, "phases", "shared", {"name": ["allreduce"], "description": ["one allreduce call"]})
        _table(f, "ranks", "per_rank", {"rank": list(range(nranks)), "host": ["synthetic"] * nranks,
                                        "pid": list(range(100, 100 + nranks)), "cpu_at_start": list(range(nranks)),
                                        "cpu_affinity": ["0-1"] * nranks, "omp_threads": [1] * nranks})
        _table(f, "samples", "per_rank", samples, {"start_s": "s", "wall_s": "s", "cpu_s": "s"})
        _table(f, "summary", "shared", summary, {"bytes": "B", "t_mean_us": "us", "p50_us": "us"})
    digest.stamp_file(path)  # as the C++ writers: read from verified bytes, not in a child process
    return path


TIME_COLUMNS_US = ("t_min_us", "t_mean_us", "t_max_us", "p50_us", "p99_us", "cpu_mean_us")


def scaled_copy(src: Path, dst: Path, factor: float) -> Path:
    """Copy a real trace with every duration × ``factor`` (bandwidths ÷ factor); marked simulated."""
    shutil.copyfile(src, dst)
    with edit_h5(dst) as f:
        for col in ("start_s", "wall_s", "cpu_s"):
            f["samples"][col][...] = f["samples"][col][()] * factor
        for col in TIME_COLUMNS_US:
            if col in f["summary"]:
                f["summary"][col][...] = f["summary"][col][()] * factor
        for col in ("algbw_GBps", "busbw_GBps"):
            if col in f["summary"]:
                f["summary"][col][...] = f["summary"][col][()] / factor
        if "buckets" in f:
            f["buckets"]["t_mean_us"][...] = f["buckets"]["t_mean_us"][()] * factor
        f.attrs["simulated"] = np.int64(1)
    return Path(dst)


def lognormal_walls(seed: int, nranks: int, iters: int, median_s: float, sigma: float) -> np.ndarray:
    """nranks × iters wall times, lognormal around ``median_s`` (sigma in log space)."""
    rng = np.random.default_rng(seed)
    return median_s * np.exp(rng.normal(0.0, sigma, (nranks, iters)))
