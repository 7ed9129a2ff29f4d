"""The package's shape: layers without upward imports or cycles, kind logic only in kind modules."""
from __future__ import annotations

import ast
import re
import subprocess

from helpers import PYTHON_TREE
from scaleprobe_analysis import kinds

PACKAGE = PYTHON_TREE / "scaleprobe_analysis"
# Bottom to top; a module may import modules of its own layer or below, never above.
LAYERS = [
    {"digest", "h5open", "stored", "upgrade", "textfmt", "trace", "style", "series", "alphabeta", "calibrate", "samples"},  # one trace (and its digest), the stored campaigns' readers, figure style, text, summary series, fits
    {"manifest", "campaign", "campaign_status"},  # campaigns: discovery, points, passes; status of every run
    {"train_tables", "train_figures", "train_report", "train_timeline", "train_pipeline", "train_parallelism", "allreduce", "bucket_sweep", "collective", "p2p", "replay", "train"},  # one module per kind (+ train's helpers)
    {"kinds"},  # the registry
    {"imbalance", "compare", "timeline", "export", "backends", "simulated_vs_measured"},  # kind-independent views, dispatching through the registry
    {"plots"},
    {"report"},
    {"cli"},
    {"__init__", "__main__"},
]
KIND_MODULES = {"allreduce", "bucket_sweep", "p2p", "replay", "train", "train_tables", "train_figures", "train_report",
                "train_timeline", "train_pipeline", "train_parallelism"}
# trace.py validates the tables a train trace must have (as it always did); it is below every kind module.
KIND_BRANCH_ALLOWED = KIND_MODULES | {"trace"}


def package_imports(name: str) -> set[str]:
    tree = ast.parse((PACKAGE / f"{name}.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found |= {alias.name for alias in node.names}
    return found


def test_every_module_has_a_layer():
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    assert modules == set().union(*LAYERS)


def test_no_module_imports_one_above_it_and_no_cycles():
    layer_of = {m: k for k, layer in enumerate(LAYERS) for m in layer}
    graph = {m: package_imports(m) for m in layer_of}
    upward = [(m, dep) for m, deps in graph.items() for dep in deps if layer_of[dep] > layer_of[m]]
    assert upward == []
    done, visiting = set(), []

    def visit(m):
        assert m not in visiting, f"import cycle: {' -> '.join(visiting[visiting.index(m):] + [m])}"
        if m in done:
            return
        visiting.append(m)
        for dep in graph[m]:
            visit(dep)
        visiting.pop()
        done.add(m)
    for m in graph:
        visit(m)


def test_no_kind_branches_outside_the_kind_modules():
    branch = re.compile(r"""kind["']?\]?\s*[!=]=\s*["'](allreduce|bucket_sweep|p2p|replay|train)["']""")
    offenders = [f"{p.name}: {line.strip()}" for p in sorted(PACKAGE.glob("*.py")) if p.stem not in KIND_BRANCH_ALLOWED
                 for line in p.read_text().splitlines() if branch.search(line)]
    assert offenders == []


def test_every_kind_module_implements_the_registry_interface():
    assert set(kinds.MODULES) == {"allreduce", "bucket_sweep", "collective", "p2p", "replay", "train"}
    missing = [f"{m.__name__}.{name}" for m in kinds.MODULES.values() for name in kinds.INTERFACE if not hasattr(m, name)]
    assert missing == []
    assert kinds.module_for("no-such-kind") is None


# The one open for reading HDF5 (scaleprobe_analysis/h5open.py): the digest checked on the bytes h5py
# then reads, or an isolated child for a file without one. Writers may use h5py.File(path, "w"/"r+"...);
# tests may read and damage files as they like.
WRITE_MODES = {"w", "w-", "x", "a", "r+"}


def hdf5_reads(source: str) -> list[int]:
    """Lines of h5py.File(...) opened for reading (no mode, or "r") and of h5py.is_hdf5(...)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "h5py"):
            continue
        if node.func.attr == "is_hdf5":
            lines.append(node.lineno)
        elif node.func.attr == "File":
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
            if not (isinstance(mode, ast.Constant) and mode.value in WRITE_MODES):
                lines.append(node.lineno)
    return sorted(lines)


def test_the_read_detector_finds_reads_and_spares_writes():
    assert hdf5_reads("import h5py\nwith h5py.File(p) as f: pass\nh5py.File(p, 'r')\nh5py.File(p, mode=m)\n"
                      "h5py.is_hdf5(p)\n") == [2, 3, 4, 5]
    assert hdf5_reads("h5py.File(p, 'w')\nh5py.File(p, mode='r+')\nopen_h5(p)\n") == []


def test_no_hdf5_read_outside_the_one_open():
    repo = PYTHON_TREE.parent
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"], cwd=repo,
                           capture_output=True, text=True, check=True).stdout.split()
    assert "python/scaleprobe_analysis/trace.py" in files
    offenders = [f"{name}:{line}" for name in files
                 if not name.startswith("tests/") and name != "python/scaleprobe_analysis/h5open.py"
                 and (repo / name).exists() for line in hdf5_reads((repo / name).read_text())]
    assert offenders == [], "read HDF5 through scaleprobe_analysis.h5open.open_h5 / read_image + open_image"
