"""Traces that the session fixtures make once per build and every test file's process copies.

Each tests/python/test_*.py runs in a pytest process of its own (one CTest entry each), so a session
fixture that runs the binaries used to run them again in every file that asked for it: the small
allreduce + bucket campaign in a dozen files, the trainer campaign in five. The first process that
needs one now makes it under the build tree; the others wait on its lock and copy the finished
folder, so a test may still change or damage its own copy.

The cache key is the fixture's name, the binaries it runs (path, size and modification time: a
rebuild makes it anew) and the bytes of the shared test modules that say how (conftest.py,
helpers.py, ...): a changed size list or flag is a new key. A fixture that fails leaves no entry.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from helpers import build_dir

HERE = Path(__file__).resolve().parent


def cache_key(name: str, binaries: list[Path]) -> str:
    key = hashlib.sha256(name.encode())
    for binary in binaries:
        st = os.stat(binary)
        key.update(f"{binary}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    for module in sorted(HERE.glob("*.py")):
        if not module.name.startswith("test_"):
            key.update(module.name.encode() + module.read_bytes())
    return key.hexdigest()[:16]


def shared_folder(name: str, binaries: list[Path], make: Callable[[Path], None], dest: Path) -> Path:
    """``dest``, a copy of the folder that ``make(folder)`` fills, made at most once per key.

    Runs ``make`` and the copy under an exclusive lock on the fixture's name; ``make`` fills a
    scratch folder that is renamed into place only when it returns, so a failure (``pytest.fail``
    included) leaves nothing that a later process would take for finished.
    """
    cache = build_dir() / "pytest-fixtures"
    cache.mkdir(parents=True, exist_ok=True)
    made = cache / f"{name}-{cache_key(name, binaries)}"
    with open(cache / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not made.is_dir():
            for stale in cache.glob(f"{name}-*"):  # an older build's, or a failed attempt's scratch
                shutil.rmtree(stale)
            scratch = cache / f"{made.name}.partial"
            scratch.mkdir()
            make(scratch)
            scratch.rename(made)
        shutil.copytree(made, dest)
    return dest
