"""The package's shape: layers without upward imports or cycles, kind logic only in kind modules."""
from __future__ import annotations

import ast
import re

from helpers import ANALYSIS
from scaleprobe_analysis import kinds

PACKAGE = ANALYSIS / "scaleprobe_analysis"
# Bottom to top; a module may import modules of its own layer or below, never above.
LAYERS = [
    {"digest", "h5open", "textfmt", "trace", "style", "series", "alphabeta", "samples"},  # one trace (and its digest), figure style, text, summary series
    {"manifest", "campaign", "campaign_status"},  # campaigns: discovery, points, passes; status of every run
    {"train_tables", "train_figures", "allreduce", "bucket_sweep", "train"},  # one module per kind (+ train's helpers)
    {"kinds"},  # the registry
    {"imbalance", "compare", "timeline", "export", "backends"},  # kind-independent views, dispatching through the registry
    {"plots"},
    {"report"},
    {"cli"},
    {"__init__", "__main__"},
]
KIND_MODULES = {"allreduce", "bucket_sweep", "train", "train_tables", "train_figures"}
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
    branch = re.compile(r"""kind["']?\]?\s*[!=]=\s*["'](allreduce|bucket_sweep|train)["']""")
    offenders = [f"{p.name}: {line.strip()}" for p in sorted(PACKAGE.glob("*.py")) if p.stem not in KIND_BRANCH_ALLOWED
                 for line in p.read_text().splitlines() if branch.search(line)]
    assert offenders == []


def test_every_kind_module_implements_the_registry_interface():
    assert set(kinds.MODULES) == {"allreduce", "bucket_sweep", "train"}
    missing = [f"{m.__name__}.{name}" for m in kinds.MODULES.values() for name in kinds.INTERFACE if not hasattr(m, name)]
    assert missing == []
    assert kinds.module_for("no-such-kind") is None
