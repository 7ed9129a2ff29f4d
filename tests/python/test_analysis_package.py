"""The analysis installs as a Python package (python/pyproject.toml) and its `scaleprobe-analyze`
entry point works from outside the repository; the source-tree wrapper honours SCALEPROBE_PYTHON.

The venv sees Debian's packages (--system-site-packages) and installs without dependencies or an
index (PyPI is unreachable here; Debian's h5py carries another distribution name)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv

from helpers import ANALYSIS, PYTHON_TREE, REPO, differing_figures

STORED = REPO / "results" / "2026-11-22-allreduce-np2-vm"


def test_installed_entry_point_reproduces_a_stored_report(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(PYTHON_TREE, src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps",
                              "--no-build-isolation", "--no-index", "-q", str(src)],
                             capture_output=True, text=True, timeout=300)
    if install.returncode != 0 and "no such option: --python" in install.stderr:
        install = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index",
                                  "-q", str(src)], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    exe = env_dir / "bin" / "scaleprobe-analyze"
    assert exe.exists()
    out = tmp_path / "report"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([str(exe), "report", str(STORED), "-o", str(out)], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    assert (out / "report.md").read_bytes() == (STORED / "report" / "report.md").read_bytes()
    assert differing_figures(out / "figures", STORED / "report" / "figures") == []


def test_wrapper_uses_scaleprobe_python(tmp_path):
    fake = tmp_path / "fakepython"
    fake.write_text("#!/bin/sh\necho \"fake python: $*\"\n")
    fake.chmod(0o755)
    run = subprocess.run([str(ANALYSIS / "scaleprobe-analyze"), "--help"], capture_output=True, text=True,
                         env={**os.environ, "SCALEPROBE_PYTHON": str(fake)}, timeout=60)
    assert run.returncode == 0 and run.stdout.startswith("fake python: -m scaleprobe_analysis --help")
