"""The C++ layering of docs/architecture.md holds on the tree, and its checker catches each kind of break."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from helpers import REPO

CHECKER = REPO / "scripts" / "check_architecture.py"


def check(root):
    return subprocess.run([sys.executable, str(CHECKER), "--root", str(root)], capture_output=True, text=True)


def copy_of_the_tree(tmp_path):
    """The tracked C++ sources and the rule file, outside git (the checker then walks the folder)."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files"], capture_output=True, text=True, check=True).stdout.split()
    for name in listed:
        if name.endswith((".cpp", ".hpp", ".h", ".cu", ".cuh", ".hpp.in")) or name == "docs/architecture.md":
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / name, tmp_path / name)
    return tmp_path


def test_the_tree_keeps_its_architecture():
    result = check(REPO)
    assert result.returncode == 0, result.stdout


def test_a_planted_upward_include_fails_naming_file_line_and_rule(tmp_path):
    root = copy_of_the_tree(tmp_path)
    assert check(root).returncode == 0  # the copy alone passes: what fails below is the plant
    source = root / "core" / "run" / "error.cpp"
    source.write_text('#include "trainers/dp/engine.hpp"\n' + source.read_text())
    result = check(root)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        'core/run/error.cpp:1: includes "trainers/dp/engine.hpp" (part trainers/dp), which part core/run may not '
        "(it may include: nothing else; docs/architecture.md)"]


@pytest.mark.parametrize("source, include, broken", [
    # the harness's bottom layer reaching its top one
    ("core/run/options.cpp", "core/trace/json_report.hpp", "(part core/trace), which part core/run may not"),
    # one model including another
    ("trainers/gpt/model.cpp", "trainers/resnet/model.hpp", "(part trainers/resnet), which part trainers/gpt may not"),
])
def test_an_include_against_the_layering_fails(tmp_path, source, include, broken):
    root = copy_of_the_tree(tmp_path)
    planted = root / source
    planted.write_text(planted.read_text() + f'#include "{include}"\n')
    result = check(root)
    assert result.returncode == 1
    assert f"{source}:" in result.stdout and broken in result.stdout


def test_a_source_outside_every_part_and_a_cycle_fail(tmp_path):
    root = copy_of_the_tree(tmp_path)
    (root / "newpart").mkdir()
    (root / "newpart" / "thing.cpp").write_text("int thing;\n")
    rules = root / "docs" / "architecture.md"
    rules.write_text(rules.read_text().replace("core/run:\n", "core/run: collectives\n", 1))
    out = check(root).stdout
    assert "newpart/thing.cpp: in no part of docs/architecture.md" in out
    assert "cycle: collectives -> core/measure -> core/run -> collectives" in out
