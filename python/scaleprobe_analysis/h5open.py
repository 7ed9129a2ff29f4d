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

# The child runs this interpreter (Debian's /usr/bin/python3 in the project's own use), so its h5py,
# numpy and pandas are the parent's and what it pickles unpickles here.
PYTHON = sys.executable or "/usr/bin/python3"
PACKAGE_PARENT = Path(__file__).resolve().parents[1]  # analysis/, so the child imports this package
MEMORY_FLOOR = 2 << 30  # address space a read may map beyond the child's start: this, or 16x the file
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


def run_isolated(target: str, data: bytes, path: str | Path, *, timeout_s: float | None = None,
                 memory_bytes: int | None = None):
    """``target(data, str(path))`` (``"module:function"`` of this package) run in a child process
    under an address-space and a wall-time limit; returns its result. Raises IsolatedError (one line)
    when it crashed, ran out of time or memory, or refused the file (then the refusal's own line)."""
    result = run_isolated_many(target, [(data, path)], timeout_s=timeout_s, memory_bytes=memory_bytes)[0]
    if isinstance(result, IsolatedError):
        raise result
    return result


# The child: the reader's imports, then the address-space limit (that much above what the start
# mapped, so the limit is the read's, whatever the libraries map at import), then frames of an 8-byte length and a pickle, (path, data) in and
# (status, value) out, one file at a time (its start, ~1 s of imports, is paid once for many files);
# it leaves without libhdf5's teardown (os._exit), which can itself crash after a damaged file.
_CHILD_MANY = r"""
import os, pickle, resource, struct, sys
limit = int(sys.argv[2])
try:  # the reader's own start (trusted code: numpy, h5py, pandas) before any limit
    import importlib
    import h5py, numpy, pandas  # what every reader here loads (lazily: bring it in now)
    module, function = sys.argv[1].split(":")
    reader, start_error = getattr(importlib.import_module("scaleprobe_analysis." + module), function), None
    with open("/proc/self/statm") as statm:
        started = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (started + limit, started + limit))
except Exception as exc:
    reader, start_error = None, f"unreadable: the isolated reader could not start ({' '.join(str(exc).split())})"
# Out of address space, C extensions fail in ways other than MemoryError
ALLOCATION_FAILED = ("memory allocation failed", "cannot allocate memory", "out of memory",
                     "error return without exception set")
inp, out = sys.stdin.buffer, sys.stdout.buffer
while True:
    head = inp.read(8)
    if len(head) < 8:
        break
    path, data = pickle.loads(inp.read(struct.unpack("<Q", head)[0]))  # a failure here ends the child
    try:
        result = ("error", start_error) if reader is None else ("ok", reader(data, path))
    except MemoryError:
        result = ("error", f"unreadable: reading it needs more than {limit >> 20} MiB of memory")
    except Exception as exc:
        problem = getattr(exc, "problem", None)
        detail = " ".join(str(exc).split()) or type(exc).__name__
        if problem:
            result = ("refused", problem)
        elif any(sign in detail.lower() for sign in ALLOCATION_FAILED):
            result = ("error", f"unreadable: reading it needs more than {limit >> 20} MiB of memory ({detail})")
        else:
            result = ("error", f"not a readable HDF5 file (corrupt or truncated): {detail}")
    blob = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(struct.pack("<Q", len(blob)) + blob)
    out.flush()
os._exit(0)
"""


class _Unpickler(pickle.Unpickler):
    """Only the classes a read returns (numpy arrays and scalars, DataFrames, a Trace or a Group):
    a child whose memory libhdf5 corrupted cannot make the parent call anything else."""

    ALLOWED = ("numpy", "pandas._libs", "pandas.core", "scaleprobe_analysis.trace", "scaleprobe_analysis.h5open",
               "pathlib", "copyreg", "collections")
    BUILTINS = {"slice", "complex", "set", "frozenset", "bytearray", "range", "object"}

    def find_class(self, module: str, name: str):
        if (module == "builtins" and name in self.BUILTINS) or any(module == m or module.startswith(m + ".")
                                                                    for m in self.ALLOWED):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"the isolated reader sent {module}.{name}, not data")


def _read_exactly(proc, n: int, deadline: float) -> bytes | None:
    """n bytes from the child's stdout by the deadline; None past the deadline, b"" at its end (it died)."""
    import select
    import time
    chunks, fd = [], proc.stdout.fileno()
    while n > 0:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return b""
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _write_all(proc, blob: bytes, deadline: float) -> bool:
    """All of blob to the child's stdin by the deadline (False: it stopped reading, e.g. hung)."""
    import select
    import time
    fd, view = proc.stdin.fileno(), memoryview(blob)
    while view:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([], [fd], [], left)[1]:
            return False
        view = view[os.write(fd, view[: 1 << 16]):]
    return True


def run_isolated_many(target: str, items: list[tuple[bytes, str | Path]], *, timeout_s: float | None = None,
                      memory_bytes: int | None = None) -> list:
    """:func:`run_isolated` for many files through one child at a time: per file its result or an
    IsolatedError. A child that crashes or runs past a file's time limit is replaced, and the
    files after that one go to a new child. Limits: memory_bytes for the child (default the larger
    of MEMORY_FLOOR and 16x the largest file), timeout_s per file (default TIME_FLOOR_S + 1 s per 10 MB)."""
    import struct
    import tempfile
    import time
    results: list = []
    memory = memory_bytes or max([MEMORY_FLOOR] + [16 * len(data) for data, _ in items])
    env = dict(os.environ, PYTHONPATH=str(PACKAGE_PARENT), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MALLOC_ARENA_MAX="2")
    proc = None
    with tempfile.TemporaryFile() as errors:
        for data, path in items:
            if proc is None:
                errors.seek(0)
                errors.truncate()
                proc = subprocess.Popen([PYTHON, "-c", _CHILD_MANY, target, str(memory)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=errors, env=env)
            timeout = timeout_s or TIME_FLOOR_S + len(data) / 10e6
            frame = pickle.dumps((str(path), data), protocol=pickle.HIGHEST_PROTOCOL)
            answer, deadline = b"", time.monotonic() + timeout
            try:
                if _write_all(proc, struct.pack("<Q", len(frame)) + frame, deadline):
                    head = _read_exactly(proc, 8, deadline)
                    answer = head and _read_exactly(proc, struct.unpack("<Q", head)[0], deadline)
                else:
                    answer = None
            except BrokenPipeError:  # it died before reading the file
                pass
            if answer:
                try:
                    status, value = _Unpickler(io.BytesIO(answer)).load()
                except Exception as exc:  # noqa: BLE001 (whatever a damaged answer raises: one line)
                    status, value = "error", f"unreadable: the isolated reader's answer was not data ({exc})"
                results.append(value if status == "ok" else IsolatedError(" ".join(str(value).split())))
                continue
            if answer is None:  # past the time limit
                proc.kill()
                proc.wait()
                results.append(IsolatedError(f"unreadable: the HDF5 library did not finish reading it in "
                                             f"{timeout:.0f} s (stopped)"))
            elif proc.wait() < 0:  # its output ended: it died
                results.append(IsolatedError(f"unreadable: the HDF5 library crashed on it (signal {-proc.returncode})"))
            else:
                errors.seek(0)
                last = (errors.read().decode(errors="replace").strip().splitlines() or ["no message"])[-1]
                results.append(IsolatedError(f"unreadable: the isolated reader exited {proc.returncode} ({last})"))
            _close(proc)
            proc = None
        if proc is not None:
            _close(proc)
    return results


def _close(proc) -> None:
    for pipe in (proc.stdin, proc.stdout):
        try:
            pipe.close()
        except OSError:  # BrokenPipeError flushing to a child that died
            pass
    proc.wait()

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

