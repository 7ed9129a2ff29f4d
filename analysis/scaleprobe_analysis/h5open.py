"""The one way scaleprobe's Python code opens an HDF5 file for reading (traces, checkpoints).

libhdf5 1.10.8 can crash (SIGSEGV, use-after-free), hang or allocate without bound on damaged
metadata, so no reader hands it a path. :func:`read_image` reads the file's bytes once and checks
the whole-file digest (:mod:`.digest`) on those bytes; :func:`open_image` opens THOSE bytes with
h5py (an in-memory file object; libhdf5 finds the superblock after the 512-byte user block), so
the data read is the data verified, not a second open by path.

A file without a digest (schema 1/2 traces, foreign .h5 files) cannot be verified: it is read in
an isolated child process (:func:`run_isolated`: Debian's Python, an address-space limit and a
wall-time limit) that gets the same bytes on stdin and sends back the data it read, pickled. A
crash, hang or runaway allocation there becomes one line, e.g. "unreadable: the HDF5 library
crashed on it (signal 11)", and the caller goes on. :func:`open_h5` gives either an h5py.File
(digest verified) or a :class:`Group` snapshot of the whole file read in the child, both read
with the same ``f["a/b"][()]``, ``f.attrs.get(...)``, ``for name in f`` code.
"""
from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from . import digest

PYTHON = "/usr/bin/python3"  # Debian's, with h5py
PACKAGE_PARENT = Path(__file__).resolve().parents[1]  # analysis/, so the child imports this package
MEMORY_FLOOR = 2 << 30  # the child's address-space limit: this, or 16x the file when larger
TIME_FLOOR_S = 60.0  # the child's wall-time limit: this plus 1 s per 10 MB


class IsolatedError(ValueError):
    """The isolated read failed; ``str(e)`` is one line naming the problem (not the file)."""


def read_image(path: str | Path) -> tuple[bytes, bool]:
    """The file's bytes and whether its digest was verified (False: no digest, the older format).
    Raises digest.DigestError (corrupt, not HDF5) or OSError (cannot read)."""
    data = Path(path).read_bytes()
    return data, digest.verify_bytes(data)


def open_image(data: bytes):
    """An h5py.File on a file held in memory (read-only; a user block is skipped)."""
    import h5py  # here: the package imports without h5py where no file is read
    return h5py.File(io.BytesIO(data), "r")


class Group:
    """A snapshot of an HDF5 group read in the isolated child: ``attrs`` (a dict of the values h5py
    gives), members by name (``g["a/b"]``), datasets as numpy arrays, in the file's order."""

    def __init__(self, attrs: dict, members: dict):
        self.attrs = attrs
        self._members = members

    def __getitem__(self, key: str):
        node = self
        for part in [p for p in key.split("/") if p]:
            if not isinstance(node, Group) or part not in node._members:
                raise KeyError(f"no object '{key}' in the file")
            node = node._members[part]
        return node

    def __contains__(self, key: str) -> bool:
        try:
            self[key]
        except KeyError:
            return False
        return True

    def __iter__(self):
        return iter(self._members)

    def __len__(self) -> int:
        return len(self._members)

    def keys(self):
        return self._members.keys()

    def items(self):
        return self._members.items()

    def values(self):
        return self._members.values()

    def __eq__(self, other) -> bool:
        return isinstance(other, Group) and _same(self, other)

    def close(self) -> None:
        """Nothing to close (as h5py.File.close, for code written against either)."""


def _same(a, b) -> bool:
    if isinstance(a, Group) != isinstance(b, Group):
        return False
    if isinstance(a, Group):
        return (list(a.keys()) == list(b.keys()) and _same_attrs(a.attrs, b.attrs)
                and all(_same(a[k], b[k]) for k in a.keys()))
    return _same_value(a, b)


def _same_value(a, b) -> bool:
    """Equal type, shape and values (NaN equal to NaN)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def _same_attrs(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)


def snapshot_of(node) -> Group:
    """Every attribute and every dataset (read whole) under an open h5py group."""
    import h5py
    members = {}
    for name, child in node.items():
        if isinstance(child, h5py.Group):
            members[name] = snapshot_of(child)
        elif isinstance(child, h5py.Dataset):
            members[name] = child[()]
        # named datatypes and dangling links hold no data; skipped
    return Group(dict(node.attrs.items()), members)


def snapshot_image(data: bytes, path: str) -> Group:
    """Run in the isolated child: the whole file as a :class:`Group`."""
    with open_image(data) as f:
        return snapshot_of(f)


# The child: limits first, then read stdin, import the reader, run it, send one pickle, and leave
# without libhdf5's teardown (os._exit), which can itself crash on a damaged file it has read.
_CHILD = r"""
import os, pickle, resource, sys
limit = int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
data = sys.stdin.buffer.read()
try:
    import importlib
    module, function = sys.argv[1].split(":")
    result = ("ok", getattr(importlib.import_module("scaleprobe_analysis." + module), function)(data, sys.argv[2]))
except MemoryError:
    result = ("error", f"unreadable: reading it needs more than {limit >> 20} MiB of memory")
except Exception as exc:
    problem = getattr(exc, "problem", None)
    detail = " ".join(str(exc).split()) or type(exc).__name__
    result = ("refused", problem) if problem else ("error", f"not a readable HDF5 file (corrupt or truncated): {detail}")
sys.stdout.buffer.write(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
sys.stdout.flush()
os._exit(0)
"""


def run_isolated(target: str, data: bytes, path: str | Path, *, timeout_s: float | None = None,
                 memory_bytes: int | None = None):
    """``target(data, str(path))`` (``"module:function"`` of this package) run in a child process
    under an address-space and a wall-time limit; returns its result. Raises IsolatedError (one line)
    when it crashed, ran out of time or memory, or refused the file (then the refusal's own line)."""
    memory = memory_bytes or max(MEMORY_FLOOR, 16 * len(data))
    timeout = timeout_s or TIME_FLOOR_S + len(data) / 10e6
    env = dict(os.environ, PYTHONPATH=str(PACKAGE_PARENT), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MALLOC_ARENA_MAX="2")
    cmd = [PYTHON, "-c", _CHILD, target, str(path), str(memory)]
    try:
        proc = subprocess.run(cmd, input=data, capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise IsolatedError(f"unreadable: the HDF5 library did not finish reading it in {timeout:.0f} s "
                            "(stopped)") from None
    if proc.returncode < 0:
        raise IsolatedError(f"unreadable: the HDF5 library crashed on it (signal {-proc.returncode})")
    try:
        status, value = pickle.loads(proc.stdout)
    except Exception:  # no result: the child died before answering (an error in the child itself)
        last = (proc.stderr.decode(errors="replace").strip().splitlines() or ["no message"])[-1]
        raise IsolatedError(f"unreadable: the isolated reader exited {proc.returncode} ({last})") from None
    if status != "ok":
        raise IsolatedError(value)
    return value


@contextmanager
def open_h5(path: str | Path):
    """Open a file for reading the one safe way: an h5py.File on the verified bytes, or, for a
    file without a digest, a :class:`Group` snapshot read in the isolated child. Raises ValueError
    (digest.DigestError or IsolatedError, one line without the file name) or OSError."""
    data, verified = read_image(path)
    if not verified:
        yield run_isolated("h5open:snapshot_image", data, path)
        return
    with open_image(data) as f:
        yield f

