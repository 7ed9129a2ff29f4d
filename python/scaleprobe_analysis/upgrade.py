"""``scaleprobe-analyze upgrade FILE...``: re-write a file without a digest in the digested format.

Files written before the digest (schema 1/2 traces, older checkpoints) can only be read in an
isolated child process (:mod:`.h5open`), about a second each; upgraded, they read in process from
verified bytes. Per file: one isolated read of the whole file (every attribute and dataset, and the
trace as the analysis reads it, when it is one); h5jam (Debian's hdf5-tools) puts a blank 512-byte
user block in front, in a child process too; the digest is stamped into it as core/trace/file_digest.hpp
specifies (:func:`.digest.stamp_file`); the new file is read back in process from its verified bytes
and must hold exactly what the isolated read returned; only then is it renamed over the original
(a temporary name until then: nothing half-written). A file that already has a digest is left as
is; one that cannot be read, or is a trace the analysis refuses, is left as is with one line, and
the command exits 1.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pandas as pd

from . import digest, h5open
from .trace import SCHEMA_NAME, Trace, TraceError, read_image

H5JAM_TIMEOUT_S = 120


class UpgradeError(ValueError):
    """The file was left as it was; ``str(e)`` is the problem (one line, without the file name)."""


def read_for_upgrade(data: bytes, path: str) -> tuple[h5open.Group, Trace | None, str]:
    """Run in the isolated child: the whole file's snapshot, and the trace when the file is one
    (else None and why: the analysis's refusal, or '' for a file that is not a trace)."""
    with h5open.open_image(data) as f:
        snapshot = h5open.snapshot_of(f)
    schema = snapshot.attrs.get("schema")
    if (schema.decode() if isinstance(schema, bytes) else schema) != SCHEMA_NAME:
        return snapshot, None, ""
    try:
        return snapshot, read_image(Path(path), data, False), ""
    except TraceError as exc:
        return snapshot, None, exc.problem


def same_trace(a: Trace, b: Trace) -> bool:
    """Every attribute (NaN equal to NaN), table, column type and value of two reads of a trace."""
    if repr((a.attrs, a.provenance, a.env, a.slurm, a.meta)) != repr((b.attrs, b.provenance, b.env, b.slurm, b.meta)):
        return False
    if list(a.tables) != list(b.tables):
        return False
    for name, frame in a.tables.items():
        try:
            pd.testing.assert_frame_equal(frame, b.tables[name], check_exact=True)
        except AssertionError:
            return False
    return True


def _jam(src: Path, dst: Path, workdir: Path) -> None:
    h5jam = shutil.which("h5jam")
    if not h5jam:
        raise UpgradeError("h5jam not found (Debian package hdf5-tools): cannot add the digest block")
    block = workdir / "userblock"
    block.write_bytes(bytes(digest.BLOCK_BYTES))
    try:
        proc = subprocess.run([h5jam, "-i", str(src), "-u", str(block), "-o", str(dst)], capture_output=True,
                              text=True, timeout=H5JAM_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise UpgradeError(f"h5jam did not finish in {H5JAM_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        last = ((proc.stderr or proc.stdout).strip().splitlines() or [f"exit {proc.returncode}"])[-1]
        raise UpgradeError(f"h5jam failed: {last}")
    head = dst.read_bytes()[: digest.BLOCK_BYTES + len(digest.HDF5_SIGNATURE)]
    if head[digest.BLOCK_BYTES:] != digest.HDF5_SIGNATURE:
        raise UpgradeError("h5jam did not leave a 512-byte user block")


def upgrade_file(path: str | Path) -> str:
    """Upgrade one file in place; returns what was done (one line, without the file name).
    Raises UpgradeError (or OSError) and leaves the file as it was."""
    result = _upgrade([Path(path)])[0]
    if isinstance(result, Exception):
        raise result
    return result


CHUNK = 32  # files per isolated child (its start paid once) while their snapshots are held


def _upgrade(paths: list[Path]) -> list:
    """Per path: what was done, or the UpgradeError/OSError that left it as it was."""
    results: list = [None] * len(paths)
    images: list[tuple[int, bytes]] = []
    for at, path in enumerate(paths):
        try:
            data, verified = h5open.read_image(path)
        except digest.DigestError as exc:
            results[at] = UpgradeError(str(exc))
        except OSError as exc:
            results[at] = exc
        else:
            if verified:
                results[at] = "has a digest already: left as is"
            else:
                images.append((at, data))
    read = h5open.run_isolated_many("upgrade:read_for_upgrade", [(data, paths[at]) for at, data in images])
    for (at, data), isolated in zip(images, read):
        try:
            if isinstance(isolated, h5open.IsolatedError):
                raise UpgradeError(str(isolated))
            results[at] = _rewrite(paths[at], data, *isolated)
        except (UpgradeError, OSError) as exc:
            results[at] = exc
    return results


def _rewrite(path: Path, data: bytes, snapshot: h5open.Group, trace: Trace | None, refused: str) -> str:
    if refused:
        raise UpgradeError(f"a trace the analysis refuses ({refused}): left as is")
    with tempfile.TemporaryDirectory(prefix=".upgrade-", dir=path.parent) as work:
        work = Path(work)
        plain, jammed = work / "plain.h5", work / "jammed.h5"
        plain.write_bytes(data)  # the bytes that were read, not the path again
        _jam(plain, jammed, work)
        digest.stamp_file(jammed)
        new, verified = h5open.read_image(jammed)
        if not verified:
            raise UpgradeError("the upgraded file does not verify")
        with h5open.open_image(new) as f:
            if h5open.snapshot_of(f) != snapshot:
                raise UpgradeError("the upgraded file does not read back the same objects and values")
        if trace is not None and not same_trace(read_image(path, new, True), trace):
            raise UpgradeError("the upgraded trace does not read back the same tables and attributes")
        os.chmod(jammed, path.stat().st_mode & 0o7777)
        os.replace(jammed, path)
    kind = f"trace, schema {trace.attrs['schema_version']}" if trace is not None else "not a trace"
    return f"upgraded ({kind}): {len(data)} -> {len(new)} bytes, digest verified, read back identical"


def upgrade_files(paths: list[str], out, err) -> int:
    """One line per file (to ``out``; problems to ``err``); 1 if any file was left un-upgraded."""
    status = 0
    for first in range(0, len(paths), CHUNK):
        names = paths[first:first + CHUNK]
        start = time.perf_counter()
        done = _upgrade([Path(n) for n in names])
        each = (time.perf_counter() - start) / len(names)
        for name, result in zip(names, done):
            if isinstance(result, Exception):  # as `check` words a bad file: the program, then the file
                reason = result.strerror if isinstance(result, OSError) and result.strerror else result
                print(f"scaleprobe-analyze: error: {name}: {reason}", file=err)
                status = 1
            else:
                print(f"{name}: {result} ({each:.2f} s per file of {len(names)})", file=out)
    return status
